"""What the target interpreter says about itself: `target/describe.py`, run by the target.

The target may be another venv, another Python version, or not Python at all; the script imports
none of its packages and answers in one JSON line after a marker.

Starting the interpreter is most of a repeated `check`'s wait (~90 ms here), and its answer changes
only with what it reads: the interpreter binary, the `PYTHON*` variables (and HOME, for the user
site), and the directories on its `sys.path` (an install or removal changes the directory's mtime,
a `.pth` too), the include directory (`Python.h`) and the loader cache. So the answer is kept,
with those stamps, and reused only while every stamp still holds.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from inductor_doctor.core.model import UsageError
from inductor_doctor.probe._proc import run
from inductor_doctor.probe.step import Step
from inductor_doctor.target import marker, script

#: Printed by `target/describe.py` before its answer.
MARKER = marker("describe.py")


def query(python: str, timeout_s: float = 20.0,
          environ: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The target's self-description, or `{"error": "..."}` when it is not a working Python; kept
    while nothing it depends on has changed (never an error: a fix shows at once). It runs under
    `environ` (this process's environment by default)."""
    from inductor_doctor.probe import _diskcache

    env = dict(os.environ if environ is None else environ)
    # The path as given, not only the file it resolves to: a venv's python is a symlink to its base
    # interpreter and answers differently (pyvenv.cfg beside it).
    key = [_diskcache.file_key(python), os.path.abspath(python),
           _diskcache.file_key(str(script("describe.py"))),  # a doctor that asks more asks again
           sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") or k == "HOME")]
    kept = _diskcache.get("target", key) if key[0] is not None else None
    answer = kept.get("answer") if kept is not None else None
    if isinstance(answer, dict) and _stamps(answer) == kept.get("stamps"):  # type: ignore[union-attr]
        return answer
    answer = _ask(python, timeout_s, env)
    if "error" not in answer and key[0] is not None:
        _diskcache.put("target", key, {"answer": answer, "stamps": _stamps(answer)})
    return answer


def _stamps(answer: Dict[str, Any]) -> List[Any]:
    """The mtimes of everything the answer was read from (None: not there)."""
    dirs = list(answer.get("sys_path") or []) + list(answer.get("site_packages") or [])
    dirs += [answer.get("include_dir"), "/etc/ld.so.cache"]
    dirs += [os.path.join(answer["prefix"], "pyvenv.cfg")] if answer.get("prefix") else []
    dirs += [os.path.dirname(p) for p in (answer.get("modules") or {}).values() if p]
    out: List[Any] = []
    for d in dirs:
        try:
            out.append([d, os.stat(d).st_mtime_ns] if d else None)
        except OSError:
            out.append([d, None])
    return out


def _ask(python: str, timeout_s: float, env: Mapping[str, str]) -> Dict[str, Any]:
    """Runs from a temporary directory, so that the doctor's working directory cannot shadow packages."""
    with tempfile.TemporaryDirectory(prefix="indoc-target-") as tmp:
        res = run([python, str(script("describe.py"))], timeout_s=timeout_s, cwd=tmp, env=dict(env))
    if res.error:
        return {"error": res.error, "not_python": True}
    if res.timed_out:
        return {"error": f"{python} did not answer within {timeout_s:g}s"}
    data = _parse(res.stdout)
    if data is None:
        why = f"exit code {res.returncode}" if res.returncode else "no answer"
        detail = (res.stderr.strip().splitlines() or [""])[-1][:160]
        detail = f": {detail}" if detail else ""
        return {"error": f"{python} is not a usable Python interpreter ({why}{detail})", "not_python": True}
    return data


def _parse(stdout: str) -> Optional[Dict[str, Any]]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                value = json.loads(line[len(MARKER) :])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def resolve_python(python: Optional[str]) -> str:
    """`--python` may name an interpreter or a venv directory. Anything that is not a Python
    interpreter (a path that is not there, a directory without one, a file that cannot run, a
    program that runs but does not answer as Python does) is a usage error: one line, exit 2,
    before any work. One that is too slow to answer is not: the probe records that."""
    if not python:
        return sys.executable
    path = _located(python)
    answer = query(path)
    if answer.get("not_python"):
        why = str(answer.get("error") or "no answer").replace(f"{path} is not", "not", 1)
        raise UsageError(f"--python {python}: {why}; give the path of a Python interpreter or venv")
    return path


def _located(python: str) -> str:
    """The file `--python` names (a venv's bin/python for a venv), or a usage error."""
    path = Path(python).expanduser()
    if path.is_dir():
        for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if candidate.exists():
                return str(candidate)
        raise UsageError(f"--python {python}: a directory with no bin/python; give the interpreter's path")
    if not path.exists():
        import shutil

        found = shutil.which(python)
        if found:
            return found
        raise UsageError(f"--python {python}: no such file; give the path of a Python interpreter or venv")
    if not os.access(path, os.X_OK):
        raise UsageError(f"--python {python}: not executable; give the path of a Python interpreter or venv")
    return str(path)


#: The target interpreter's self-description: the first step, that every other reads.
STEP = Step("target", ("python", "step", "environ"), query, lambda m, known: {"error": m}, "target")
