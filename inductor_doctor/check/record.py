"""Preflight's record: an answer kept under the doctor's cache directory, and the fingerprint that
keys it.

The fingerprint is what a preflight answer depends on, read without running anything (a few stat
calls): the doctor and its knowledge base, the interpreter, and for each fact what its declaration
says may be read so (`quick=` in `core/facts.py`): the torch / Triton / torch_xla installs, the C++
compiler Inductor would pick and its include directories (a header installed or removed changes
them), the NVIDIA driver, and the relevant environment variables. Change any and the key changes, so
a fixed problem is never replayed from the record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from typing import Any, Dict, List, Optional

from inductor_doctor.core.document import schema_for
from inductor_doctor.core.files import file_key
from inductor_doctor.core.interpreter import canonical_interpreter, same_interpreter

#: The records are preflight's answers (`Verdict.to_dict()`); one of another schema is no record.
SCHEMA = schema_for("preflight")


def fingerprint(device: str, python: str) -> str:
    """What the answer depends on, read without running anything (a few stat calls): for each fact,
    what its declaration says may be read so (`quick=` in `core/facts.py`)."""
    from inductor_doctor.core.declare import quick_readers
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.version import __version__

    python = canonical_interpreter(python)  # `python` and `python3`: one interpreter, one record
    parts: List[Any] = [SCHEMA, __version__, _kb_version(), device, python, file_key(python)]
    parts += [_quick(reader, python) for reader in quick_readers(Facts)]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


def _quick(reader: str, python: str) -> Any:
    """One declared reader's answer: `package:<name>`, `file:<path>`, `compiler`, `python_h`, `env`."""
    kind, _, arg = reader.partition(":")
    if kind == "package":
        return _package(arg, python)
    if kind == "file":
        return file_key(arg)
    if kind == "compiler":
        return _compiler()
    if kind == "python_h":
        if not same_interpreter(python, sys.executable):
            return None  # another interpreter's headers: its compiler answers tell, at check time
        import sysconfig  # a venv's or conda's own headers

        return file_key(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
    if kind == "env":
        return sorted(_relevant_env().items())
    raise ValueError(f"a fact declares an unknown fingerprint reader {reader!r}")


def _kb_version() -> str:
    from inductor_doctor.kb import KB_VERSION

    return KB_VERSION


def _package(name: str, python: str) -> Any:
    """The installed package's directory and version file, as (path, size, mtime) triples."""
    if not same_interpreter(python, sys.executable):
        return _package_elsewhere(name, python)
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec else None
    if not origin:
        return None
    folder = os.path.dirname(origin)
    return [file_key(folder), file_key(os.path.join(folder, "version.py")), file_key(origin)]


def _package_elsewhere(name: str, python: str) -> Any:
    import subprocess

    code = ("import importlib.util as u, sys; s = u.find_spec(sys.argv[1]); "
            "print(s.origin if s and s.origin else '')")
    try:
        out = subprocess.run([python, "-c", code, name], capture_output=True, text=True, timeout=30,
                             check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if not out:
        return None
    folder = os.path.dirname(out)
    return [file_key(folder), file_key(os.path.join(folder, "version.py")), file_key(out)]


#: Where the headers a compile needs live (Python.h, omp.h, the C++ library's): installing or
#: removing one changes its directory's mtime. Globbed, never asked of the compiler (that runs it).
HEADER_DIRS = (
    "/usr/include", "/usr/local/include", "/usr/include/*-linux-gnu", "/usr/lib/gcc/*/*/include",
    "/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/llvm-*/include", "/opt/homebrew/opt/libomp/include",
)


def _compiler() -> Any:
    """The C++ compiler Inductor would pick (CXX, else g++, c++, clang++), the C compiler Triton
    would, and the state of the header directories they search."""
    import glob

    cxx = os.environ.get("CXX") or next((c for c in ("g++", "c++", "clang++") if shutil.which(c)), None)
    cc = os.environ.get("CC") or "gcc"
    headers = [[d, _mtime(d)] for pattern in HEADER_DIRS for d in sorted(glob.glob(pattern))]
    return [cxx, file_key(shutil.which(cxx) if cxx else None), cc, file_key(shutil.which(cc)), headers]


def _mtime(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _relevant_env() -> Dict[str, str]:
    from inductor_doctor.core.envvars import relevant_env

    env = dict(relevant_env())
    for name in ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "TMPDIR", "CXX", "CC", "CXXFLAGS", "CFLAGS"):
        env.setdefault(name, os.environ.get(name, ""))
    return env


def _dir() -> Optional[str]:
    from inductor_doctor.core.paths import cache_dir

    base = cache_dir()
    return None if base is None else os.path.join(str(base), "preflight")


def read(key: str) -> Optional[Dict[str, Any]]:
    base = _dir()
    if base is None or os.environ.get("INDUCTOR_DOCTOR_NO_CACHE"):
        return None
    from inductor_doctor.core.files import read_own_text

    text = read_own_text(os.path.join(base, key + ".json"))
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def write(key: str, data: Dict[str, Any]) -> None:
    base = _dir()
    if base is None:
        return
    from pathlib import Path

    from inductor_doctor.core.files import write_text_atomic
    from inductor_doctor.core.paths import private_dir

    try:
        private_dir(Path(base))
        write_text_atomic(Path(base) / (key + ".json"), json.dumps(data), private=True, durable=False)
    except OSError:
        pass  # no record: the next call checks again
