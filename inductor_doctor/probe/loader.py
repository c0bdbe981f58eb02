"""Where the dynamic loader would find a library, and what libstdc++ it would give the target.

We ask `ldconfig -p` (the loader's own cache) once per process rather than guessing from paths, and
put the places the loader searches first in front of it: `LD_LIBRARY_PATH`, then a conda
environment's `lib/` (conda's Python carries an RPATH to it, so conda's libstdc++ wins over the
system one there). Only libraries for the target's machine count: a 32-bit entry is not a match.
"""

from __future__ import annotations

import os
import shutil
import threading
from typing import Dict, List, Optional, Sequence, Tuple

from inductor_doctor.probe import _elf
from inductor_doctor.probe._proc import run

_ARCH_TOKENS = {
    "x86_64": "x86-64",
    "amd64": "x86-64",
    "aarch64": "AArch64",
    "arm64": "AArch64",
    "ppc64le": "64bit",
    "s390x": "64bit",
}

COMMON_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
)

_lock = threading.Lock()
_cache: Optional[List[Tuple[str, str, str]]] = None


def ldconfig_entries() -> List[Tuple[str, str, str]]:
    """`(soname, flags, path)` for every library in the loader cache; empty when unavailable."""
    global _cache
    with _lock:
        if _cache is not None:
            return _cache
        exe = shutil.which("ldconfig") or next(
            (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
        )
        entries: List[Tuple[str, str, str]] = []
        if exe:
            # `ldconfig -p` prints its cache file: the answer is kept under that file's stamp, so a
            # repeated check starts no process for it (an ldconfig run writes a new file).
            from inductor_doctor.probe import _diskcache

            found = _diskcache.of_file(f"ldconfig-{exe}", LD_CACHE, lambda _: _ldconfig(exe))
            entries = [(str(a), str(b), str(c)) for a, b, c in found or []]
        _cache = entries
        return entries


#: The loader's cache, which `ldconfig -p` prints.
LD_CACHE = "/etc/ld.so.cache"


def _ldconfig(exe: str) -> Optional[List[Tuple[str, str, str]]]:
    res = run([exe, "-p"], timeout_s=10)
    if not res.ok:
        return None  # never kept: asked again next time
    entries: List[Tuple[str, str, str]] = []
    for line in res.stdout.splitlines():
        # "\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1"
        if "=>" not in line:
            continue
        left, path = line.split("=>", 1)
        parts = left.strip().split(" ", 1)
        if len(parts) == 2:
            entries.append((parts[0], parts[1].strip(), path.strip()))
    return entries


def ldconfig_find(soname: str, machine: str = "") -> List[str]:
    """Paths the loader cache lists for `soname`, those for `machine` first (others only if none)."""
    hits = [(flags, path) for name, flags, path in ldconfig_entries() if name == soname]
    token = _ARCH_TOKENS.get(machine.lower(), "")
    if token:
        mine = [p for f, p in hits if token in f]
        if mine:
            return _dedupe(mine)
    return _dedupe([p for _, p in hits])


def _dedupe(paths: Sequence[str]) -> List[str]:
    seen: Dict[str, None] = {}
    for p in paths:
        seen.setdefault(p, None)
    return list(seen)


def search_dirs(target: Dict[str, object]) -> List[str]:
    """Directories searched before the loader cache for the target interpreter's process."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    for key in ("prefix", "base_prefix"):
        prefix = target.get(key)
        if isinstance(prefix, str) and os.path.isdir(os.path.join(prefix, "conda-meta")):
            dirs.append(os.path.join(prefix, "lib"))
    return _dedupe(dirs)


def find_library(soname: str, target: Dict[str, object]) -> Optional[str]:
    """The file the loader would most likely map for `soname` in the target's process."""
    for d in search_dirs(target):
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return p
    machine = str(target.get("machine") or "")
    hits = [h for h in ldconfig_find(soname, machine) if os.path.isfile(h)]  # a stale entry is no file
    if hits:
        return hits[0]
    for d in COMMON_DIRS:
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return p
    return None


def libstdcxx_versions(path: str) -> Tuple[Optional[str], Optional[str]]:
    """`(GLIBCXX max, CXXABI max)` from the library's ELF version definitions."""
    from inductor_doctor.probe import _diskcache

    glibcxx, cxxabi = _diskcache.of_file("libstdcxx-versions", path, _libstdcxx_versions)
    return glibcxx, cxxabi


def _libstdcxx_versions(path: str) -> list:
    with _elf.open_elf(path) as elf:
        names = _elf.version_definitions(elf)
    return [_elf.max_version(names, "GLIBCXX"), _elf.max_version(names, "CXXABI")]
