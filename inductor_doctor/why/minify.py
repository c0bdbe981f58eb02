"""A minimal reproducer from PyTorch's own minifier, made in the doctor's scratch directory.

Where the failure is in Inductor, `why` runs the command once more with
`TORCHDYNAMO_REPRO_AFTER` (`aot` for a crash in Inductor: the graph AOTAutograd hands it; `dynamo`
for a wrong result or a failure in the decompositions, which AOTAutograd applies: the graph Dynamo
captured) and `TORCHDYNAMO_REPRO_LEVEL` (2: dump a minifier launcher when the compile fails; 4: when
the result differs from eager), then runs the `minifier_launcher.py` that torch wrote. Torch writes
those files under `TORCH_COMPILE_DEBUG_DIR` (else `./torch_compile_debug`) and the minified
`repro.py` into the working directory (`TORCHDYNAMO_REPRO_LEVEL=1`, and 4 after `aot`, copy a
`repro.py` into the working directory of the program itself, which is why those are not used): both
point into the doctor's scratch directory here, and the launcher runs there, so nothing is written
into the user's tree. The reproducer is then copied to a directory of its own under the system's
temporary directory (`inductor-doctor-repro-*`), which the answer names and the doctor leaves for
the user.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from inductor_doctor.why.attempt import Launch, run_attempt
from inductor_doctor.why.runs import Session

#: The launcher's minification compiles many times over: its time limit, in per-run timeouts.
MINIFIER_RUNS = 12
#: An error torch logged and went on from (its accuracy check failing on its own, say).
_LOGGED = re.compile(r"^[EW]\d{4} [^\]]*\] (?:\[[^\]]*\] )?([\w.]+(?:Error|Exception): .*)$", re.M)


@dataclass
class Minified:
    """What the minifier made: the reproducer's path, or why there is none."""

    after: str  # dynamo | aot
    level: int
    path: Optional[str] = None
    trouble: Optional[str] = None
    duration_s: float = 0.0

    def to_dict(self) -> Dict[str, object]:
        return {"after": self.after, "level": self.level, "path": self.path, "trouble": self.trouble,
                "duration_s": round(self.duration_s, 2)}

    def sentence(self) -> str:
        how = f"TORCHDYNAMO_REPRO_AFTER={self.after} TORCHDYNAMO_REPRO_LEVEL={self.level}"
        if self.path:
            return f"A minimal reproducer, made by PyTorch's minifier ({how}): {self.path}."
        return f"PyTorch's minifier ({how}) made no reproducer: {self.trouble}."


def minify(session: Session, python: str, argv: Sequence[str], accuracy: bool,
           in_process: bool = False) -> Minified:
    """The command with the minifier's settings, then its launcher, both in the scratch directory.
    A crash is minified after AOTAutograd first and, where that graph alone does not fail (a pass
    that runs only on the whole program's inference graph), after Dynamo; a wrong result after
    Dynamo. `in_process`: the after-AOT launcher's checks run in its own process (`minify
    --no-isolate`, many times faster), for a failure that is an exception, not a crash of the process."""
    tried: List[Minified] = []
    for after in (("dynamo", "aot") if accuracy else ("aot", "dynamo")):
        made = _minify(session, python, argv, accuracy, after, in_process, len(tried))
        tried.append(made)
        if made.path:
            break
    out = tried[-1]
    out.duration_s = sum(m.duration_s for m in tried)
    if not out.path and len(tried) > 1:
        out.trouble = "; ".join(f"after {m.after}: {m.trouble}" for m in tried)
    return out


def _minify(session: Session, python: str, argv: Sequence[str], accuracy: bool, after: str, in_process: bool,
            n: int) -> Minified:
    level = 4 if accuracy else 2
    out = Minified(after, level)
    root = os.path.join(session.root, f"minify-{n}")
    work = _dir(root, "work")
    env = dict(session.user_env)
    env.update({"TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor-cache"),
                "TRITON_CACHE_DIR": os.path.join(root, "triton-cache"),
                "TORCH_COMPILE_DEBUG_DIR": os.path.join(root, "debug"),
                "TORCHDYNAMO_REPRO_AFTER": after, "TORCHDYNAMO_REPRO_LEVEL": str(level),
                # the launcher's isolated checks run `python` from PATH: the command's own first
                "PATH": os.pathsep.join([os.path.dirname(python), env.get("PATH", "")])})
    session.say(f"the minifier: TORCHDYNAMO_REPRO_AFTER={after} TORCHDYNAMO_REPRO_LEVEL={level}")
    # after AOTAutograd, the accuracy level copies a repro.py into the working directory: the command
    # runs from the scratch one then, its file arguments made absolute
    cwd, command_argv = (work, _absolute(argv)) if (after, level) == ("aot", 4) else (None, list(argv))
    first = run_attempt(Launch(command_argv, env, _dir(root, "command"), session.timeout, cwd=cwd),
                        session.stop)
    out.duration_s = first.duration_s
    launchers = sorted(glob.glob(os.path.join(root, "debug", "torch_compile_debug", "*", "minifier",
                                              "minifier_launcher.py")), key=os.path.getmtime)
    if not launchers:
        logged = _LOGGED.findall(first.output.decode("utf-8", errors="replace"))
        out.trouble = "the command wrote no minifier launcher (" + (
            f"torch logged: {logged[-1].strip()}" if logged and first.passed else
            "it passed" if first.passed else first.fingerprint(session.scrub)) + ")"
        return out
    env.pop("TORCHDYNAMO_REPRO_AFTER")
    command = ["minify", "--no-isolate"] if in_process and after == "aot" else []
    launched = run_attempt(Launch([python, launchers[-1], *command], env, _dir(root, "launcher"),
                                  session.timeout * MINIFIER_RUNS, cwd=work), session.stop)
    out.duration_s += launched.duration_s
    made = os.path.join(work, "repro.py")
    if not os.path.exists(made):
        out.trouble = ("its launcher ended without one "
                       f"({'exit 0' if launched.passed else launched.fingerprint(session.scrub)})")
        return out
    out.path = keep(made, session.root)
    return out


def keep(made: str, root: str) -> str:
    """The reproducer, copied out of the scratch directory `root` before it is removed: the settings
    torch wrote into it that point there (its caches) are dropped, so the user's own apply; the
    directories it reads (the saved inputs, `save_dir=...`) are copied beside it and named there."""
    kept = tempfile.mkdtemp(prefix="inductor-doctor-repro-")
    with open(made, encoding="utf-8", errors="replace") as fh:
        lines = [line for line in fh if not (root in line and line.lstrip().startswith("os.environ["))]
    text = "".join(lines)
    quoted = re.findall(r"""['"](""" + re.escape(root) + r"""[^'"]*)['"]""", text)
    for n, path in enumerate(sorted(set(quoted), key=len, reverse=True)):
        name = f"{os.path.basename(path.rstrip(os.sep)) or 'data'}-{n}" if n else \
            os.path.basename(path.rstrip(os.sep)) or "data"
        there = os.path.join(kept, name)
        if os.path.isdir(path):
            shutil.copytree(path, there)
        elif os.path.isfile(path):
            shutil.copyfile(path, there)
        text = text.replace(path, there)
    path = os.path.join(kept, "repro.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _absolute(argv: Sequence[str]) -> List[str]:
    """The command's arguments that name files here, made absolute (it runs from elsewhere)."""
    return [os.path.abspath(a) if not a.startswith("-") and os.path.exists(a) else a for a in argv]


def _dir(root: str, name: str) -> str:
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    return path
