"""One interpreter, however its path is spelled: the name every record about it is kept under.

`python`, `python3` and `python3.11` are one interpreter where they link to one another (a base
install's bin/, pyenv's, a venv's): a check run as `python3` and a preflight run as `python` must
find each other's records (the canary outcomes, the last report, preflight's answer). But a venv's
`python3` is itself a link to the base interpreter, and it is another interpreter all the same.
The canonical path is decided as Python decides what it is (its `getpath`): a path with a
`pyvenv.cfg` beside it, or one directory up, starts a venv, whose `sys.prefix` and site-packages are
its own, so its links are followed only within its own directory (`bin/python` -> `bin/python3`,
never on to the base); any other path is the interpreter it resolves to (`os.path.realpath`), as
Python finds its prefix from there. Resolved, but never across a venv's boundary.
"""

from __future__ import annotations

import os
import re
from typing import Optional

#: Links followed at most (a loop stops there).
MAX_LINKS = 40
#: A venv's interpreter names (`python`, `python3`, `python3.11`): one interpreter, links or copies.
_VENV_NAMES = re.compile(r"python(\d+(\.\d+)*)?")


def canonical_interpreter(path: str) -> str:
    """The path that names this interpreter whatever its spelling: `venv/bin/python` ->
    `venv/bin/python3` (its link to the base interpreter is not followed), `/usr/bin/python3` ->
    `/usr/bin/python3.11`. Running it is running the same interpreter with the same `sys.prefix`."""
    current = os.path.abspath(path)
    if venv_of(current) is None:
        return os.path.realpath(current)
    for _ in range(MAX_LINKS):
        if not os.path.islink(current):
            break
        try:
            target = os.readlink(current)
        except OSError:
            break
        following = os.path.normpath(os.path.join(os.path.dirname(current), target))
        if _real_dir(following) != _real_dir(current):  # out of the venv: to its base interpreter
            break
        current = following
    folder, name = _real_dir(current), os.path.basename(current)
    if _VENV_NAMES.fullmatch(name) and os.path.exists(os.path.join(folder, "python3")):
        name = "python3"  # a venv made with --copies: its python, python3, python3.11 are one
    return os.path.join(folder, name)


def venv_of(path: str) -> Optional[str]:
    """The venv an interpreter started as `path` runs in (where its `pyvenv.cfg` is), or None."""
    folder = os.path.dirname(os.path.abspath(path))
    for candidate in (folder, os.path.dirname(folder)):
        if os.path.isfile(os.path.join(candidate, "pyvenv.cfg")):
            return candidate
    return None


def same_interpreter(a: str, b: str) -> bool:
    return canonical_interpreter(a) == canonical_interpreter(b)


def _real_dir(path: str) -> str:
    return os.path.realpath(os.path.dirname(path))
