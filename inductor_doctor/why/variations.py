"""The controlled variations `why` re-runs a failing command under, most telling first.

Each variation changes one thing of the environment the command runs in, never the user's files:

* **fresh caches**: Inductor's and Triton's caches in the doctor's temporary directory (every
  variation runs with its own fresh caches, so none writes into the user's; this one differs from
  the baseline in nothing else, and is judged first, so a stale cache is never blamed on another);
* **the matched issue's workarounds**: each environment workaround of the known issue the baseline's
  output matched (`export CXX=g++`, `export ATEN_CPU_CAPABILITY=default`, ...), read by bash;
* **your settings**: the user's `TORCHINDUCTOR_*`, `TRITON_*`, `TORCH_*`/`TORCHDYNAMO_*` and compiler
  variables (`CXX`, `CXXFLAGS`, `LD_PRELOAD`, ...), each group removed in turn;
* **torch.compile disabled** (`TORCH_COMPILE_DISABLE=1`, torch's own switch): if it still fails,
  the error is not the compiler's;
* **compile workers off** (`TORCHINDUCTOR_COMPILE_THREADS=1`): Inductor compiles in-process;
* **each other C++ compiler** on the machine (`CXX=/usr/bin/clang++-16`, ...), found on PATH and in
  the usual directories, one per distinct binary;
* **the backend stepped down**: torch.compile with `backend="eager"` (Dynamo alone), then
  `"aot_eager"` (Dynamo and AOTAutograd), forced by the `sitecustomize` in `target/why_site.py`.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

ENVIRONMENT, CONTROL, LAYER, RELEASE, BISECT = "environment", "control", "layer", "release", "bisect"

#: The user's settings, grouped; every group is removed at once (cache locations are not settings:
#: the fresh-caches variation covers them).
GROUPS = (
    ("Inductor settings", ("TORCHINDUCTOR_", "TORCH_INDUCTOR_")),
    ("Triton settings", ("TRITON_",)),
    ("torch and Dynamo settings", ("TORCHDYNAMO_", "TORCH_", "PYTORCH_")),
)
COMPILER_VARS = ("CXX", "CC", "CXXFLAGS", "CFLAGS", "CPPFLAGS", "LDFLAGS", "CPATH", "C_INCLUDE_PATH",
                 "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "LD_PRELOAD")
CACHE_VARS = frozenset({"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME"})
#: The doctor's own variables, never part of a variation.
OWN_PREFIX = "INDUCTOR_DOCTOR_"
COMPILER_NAMES = re.compile(r"^(?:g\+\+|c\+\+|clang\+\+)(?:-\d+(?:\.\d+)*)?$")
EXTRA_DIRS = ("/usr/bin", "/usr/local/bin")
MAX_COMPILERS = 4


@dataclass
class Variation:
    """One change to the environment the command runs in."""

    key: str
    label: str  # what a person reads: "CXX=/usr/bin/g++"
    kind: str  # environment (a cause when it passes) | control (compile disabled) | layer (backend)
    set_env: Dict[str, str] = field(default_factory=dict)
    unset_env: List[str] = field(default_factory=list)
    backend: Optional[str] = None  # the torch.compile backend forced by the sitecustomize
    count_compiles: bool = False
    workaround: Optional[str] = None  # the command this variation proves when it passes
    cause: str = ""  # the cause it names when it passes
    issue: Optional[str] = None  # the known issue whose workaround this is
    record_ops: bool = False  # the compiler bisector's applications recorded (why/bisect.py)

    def to_dict(self) -> Dict[str, object]:
        return {"key": self.key, "label": self.label, "kind": self.kind, "set": dict(self.set_env),
                "unset": list(self.unset_env), "backend": self.backend, "workaround": self.workaround,
                "issue": self.issue}


def fresh_caches(cache_dirs: Sequence[str]) -> Variation:
    where = " and ".join(cache_dirs) or "the cache"
    clear = "rm -rf " + " ".join(cache_dirs) if cache_dirs else None
    return Variation("fresh-caches", "fresh Inductor and Triton caches", ENVIRONMENT, workaround=clear,
                     cause=f"a stale or foreign compile cache ({where})")


def issue_workarounds(issue_id: str, effects: Iterable[Mapping[str, Optional[str]]],
                      commands: Sequence[str]) -> List[Variation]:
    out = []
    for n, (effect, command) in enumerate(zip(effects, commands)):
        sets = {k: v for k, v in effect.items() if v is not None}
        unsets = [k for k, v in effect.items() if v is None]
        out.append(Variation(f"issue:{issue_id}:{n}", command, ENVIRONMENT, sets, unsets, workaround=command,
                             cause=issue_id, issue=issue_id))
    return out


def settings_groups(env: Mapping[str, str]) -> List[Variation]:
    """One variation per group of the user's own settings that is set here."""
    out = []
    taken: set = set()
    for label, prefixes in GROUPS:
        names = sorted(k for k in env if k.startswith(prefixes) and k not in CACHE_VARS and k not in taken)
        taken.update(names)
        if names:
            out.append(_unset(label, names))
    names = sorted(k for k in COMPILER_VARS if k in env)
    if names:
        out.append(_unset("compiler settings", names))
    return out


def _unset(label: str, names: List[str]) -> Variation:
    return Variation("unset:" + ",".join(names), f"without your {label} ({', '.join(names)})", ENVIRONMENT,
                     unset_env=names, workaround="unset " + " ".join(names),
                     cause=f"your {label}: {', '.join(names)}")


def single_settings(names: Sequence[str]) -> List[Variation]:
    """A group that decided, one variable at a time: which of them it is."""
    return [_unset("setting", [n]) for n in names]


def compile_disabled() -> Variation:
    return Variation("compile-disabled", "torch.compile disabled (TORCH_COMPILE_DISABLE=1)", CONTROL,
                     {"TORCH_COMPILE_DISABLE": "1"}, count_compiles=True)


def workers_off(env: Mapping[str, str]) -> Optional[Variation]:
    if env.get("TORCHINDUCTOR_COMPILE_THREADS") == "1":
        return None
    return Variation("compile-threads-1", "compile workers off (TORCHINDUCTOR_COMPILE_THREADS=1)",
                     ENVIRONMENT, {"TORCHINDUCTOR_COMPILE_THREADS": "1"},
                     workaround="export TORCHINDUCTOR_COMPILE_THREADS=1",
                     cause="Inductor's compile worker pool")


def backends() -> List[Variation]:
    return [
        Variation("backend:eager", 'backend="eager" (Dynamo only)', LAYER, backend="eager",
                  count_compiles=True),
        Variation("backend:aot_eager", 'backend="aot_eager" (Dynamo and AOTAutograd)', LAYER,
                  backend="aot_eager", count_compiles=True),
    ]


def compilers(env: Mapping[str, str]) -> List[Variation]:
    """Each other C++ compiler on this machine (distinct binaries), as `CXX=<path>`; first, when the
    PATH misses the system directories where compilers are, the PATH with them (a compiler needs
    its assembler, linker and tools from there too, so naming it alone is not enough)."""
    current = _current_cxx(env)
    out: List[Variation] = []
    on_path = [p for p in env.get("PATH", "").split(os.pathsep) if p]
    missing = [d for d in EXTRA_DIRS if d not in on_path and any(
        os.path.dirname(c) == d for c in find_compilers(""))]
    if missing and current is None:
        added = os.pathsep.join(missing)
        path = os.pathsep.join([*on_path, *missing])
        out.append(Variation("path-system-dirs", f"PATH with {added} added (where the compilers are)",
                             ENVIRONMENT, {"PATH": path}, workaround=f'export PATH="$PATH:{added}"',
                             cause=f"the PATH: it misses {added}, where this machine's compilers are"))
    seen = {current} if current else set()
    for path in find_compilers(env.get("PATH", "")):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        out.append(Variation(f"cxx:{path}", f"CXX={path}", ENVIRONMENT, {"CXX": path},
                             workaround=f"export CXX={path}", cause=f"the C++ compiler ({_shown_cxx(env)})"))
        if len(out) >= MAX_COMPILERS:
            break
    return out


def _current_cxx(env: Mapping[str, str]) -> Optional[str]:
    command = env.get("CXX") or "g++"
    path = command if os.sep in command else shutil.which(command, path=env.get("PATH"))
    return os.path.realpath(path) if path and os.path.exists(path) else None


def _shown_cxx(env: Mapping[str, str]) -> str:
    if env.get("CXX"):
        return f"CXX={env['CXX']}"
    return "g++ on PATH" if shutil.which("g++", path=env.get("PATH")) else "none on PATH"


def find_compilers(path_var: str) -> List[str]:
    """g++/c++/clang++ (and their -N versions) on PATH and in /usr/bin, /usr/local/bin; g++ first."""
    found: Dict[str, str] = {}
    for d in [p for p in path_var.split(os.pathsep) if p] + list(EXTRA_DIRS):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            full = os.path.join(d, name)
            if COMPILER_NAMES.match(name) and name not in found and os.access(full, os.X_OK):
                found[name] = full
    return sorted(found.values(), key=lambda p: (not os.path.basename(p).startswith("g++"),
                                                 os.path.basename(p) != "g++", p))
