"""Answers that are pure functions of files on disk, remembered across runs.

Compiling the const_data_ptr probe against torch's headers costs a second and ~180 MB (cc1plus
parsing ATen); asking a compiler for its version or whether `<Python.h>` compiles costs a process
each. Their answers depend only on the files involved, so they are stored under a key made of
those files' (path, size, mtime_ns) and the flags: a reinstalled torch or an upgraded compiler
changes the key, never serves a stale answer. Failures are never stored, so fixing the environment
shows up on the very next run. `set_enabled(False)` (`check --no-cache`) asks everything afresh but
still keeps the fresh answers, so that the next plain run sees the same facts (and reuses the
canary outcomes keyed by them); `INDUCTOR_DOCTOR_NO_CACHE=1` turns it off entirely.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

from inductor_doctor.core.files import file_key  # the probe modules key their records with it

#: Bump when what is stored, or how it is computed, changes.
VERSION = 1

_enabled = True
_lock = threading.Lock()


def set_enabled(value: bool) -> None:
    global _enabled
    _enabled = value


def enabled() -> bool:
    return _enabled and not os.environ.get("INDUCTOR_DOCTOR_NO_CACHE")


def root() -> Optional[Path]:
    """The result cache's `probe/` folder; None where the result cache has no home either.

    The same answer as the result cache, so that an unset HOME never makes up a path (as root,
    `/nonexistent/.cache` would simply be created).
    """
    from inductor_doctor.core.paths import cache_dir

    base = cache_dir()
    return base / "probe" if base is not None else None


def compiler_env() -> Sequence[Sequence[str]]:
    """The compiler search-path variables set here (envvars.py's list), as a key part."""
    from inductor_doctor.core.envvars import compiler_env as current

    return current()


def _path(kind: str, key: Any, writing: bool = False) -> Optional[Path]:
    """Where `(kind, key)` is stored; None when caching is off, there is no key, or no cache dir."""
    on = not os.environ.get("INDUCTOR_DOCTOR_NO_CACHE") if writing else enabled()
    base = root() if on and key is not None else None
    if base is None:
        return None
    blob = json.dumps([VERSION, kind, key], sort_keys=True, default=str).encode()
    return base / f"{kind}-{hashlib.sha256(blob).hexdigest()[:32]}.json"


def get(kind: str, key: Any) -> Optional[Dict[str, Any]]:
    path = _path(kind, key)
    if path is None:
        return None
    from inductor_doctor.core.files import read_own_text

    text = read_own_text(path)
    try:
        value = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def put(kind: str, key: Any, value: Dict[str, Any]) -> None:
    """Store `value`; a read-only or full disk just means no cache."""
    path = _path(kind, key, writing=True)
    if path is None:
        return
    from inductor_doctor.core.files import write_text_atomic
    from inductor_doctor.core.paths import private_dir

    try:
        with _lock:
            private_dir(path.parent)
        write_text_atomic(path, json.dumps(value, sort_keys=True), private=True, durable=False)
    except OSError:
        pass


def of_file(kind: str, path: str, compute: Callable[[str], Any]) -> Any:
    """`compute(path)`, a pure function of that file, kept under its (path, size, mtime): for the
    ELF readings a repeated check would otherwise parse again (and import pyelftools for)."""
    key = file_key(path)
    kept = get(kind, key) if key is not None else None
    if kept is not None and "value" in kept:
        return kept["value"]
    value = compute(path)
    if key is not None and value is not None:
        put(kind, key, {"value": value})
    return value
