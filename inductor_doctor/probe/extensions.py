"""The compiled extensions of installed packages that link torch, checked against this torch's libraries.

A prebuilt extension (flash-attn, xformers, torchao, fbgemm-gpu, vLLM's `_C`, torchvision's ops) is
built against one torch release and build. Beside another, the loader refuses it at import
(`undefined symbol: _ZN3c10...`, or `libc10_cuda.so: cannot open shared object file` beside a
CPU-only torch), the package catches that and goes on without its ops (`operator torchvision::nms
does not exist`), or it checks the version itself and skips its own library with a warning.

What the library was built for is in its ELF: the torch libraries it links (`DT_NEEDED`), the torch
symbols it imports, the CUDA runtime it links and the GPU architectures of its device code
(`.nv_fatbin`); the package's METADATA may pin torch. What is here is in torch's own libraries,
whose exports are looked up through their hash tables (`_elf.SymbolIndex`, a millisecond a name).

Cost: the packages on `sys.path` are listed from their `RECORD` files and each shared object's
`DT_NEEDED` is read with a few `struct` reads (0.1 ms a file); that listing is kept per directory
under its mtime (installing or removing a package changes it). What a library imports and which of
it this torch lacks is kept under the library's and torch's libraries' (path, size, mtime), so a
repeated check stats a few files and reads two records.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import ExitStack
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from inductor_doctor.core.facts import ExtensionLib, ExtensionScan, TorchInfo
from inductor_doctor.probe import Step, _diskcache, _elf
from inductor_doctor.probe._fatbin import fatbin_archs
from inductor_doctor.probe.packages import normalize

#: A torch library an extension links: libtorch.so, libtorch_cpu.so, libc10_cuda.so, libtorch_python.so.
TORCH_LIB = re.compile(r"^lib(torch|c10)(_\w+)?\.so$")
_CUDART = re.compile(r"^libcudart\.so\.(\d+)")
#: Packages whose libraries are torch's own, or whose mismatch is a known issue of its own
#: (torch_xla's `_XLAC`: xla-torch-skew).
SKIP = frozenset({"torch", "torch-xla", "libtorch"})
#: How many missing symbols a library's record keeps (the count is kept whole).
KEEP_MISSING = 5
#: Bump when what is stored changes.
FORM = "extensions/1"


def scan(target: Dict[str, Any], torch: Optional[TorchInfo], budget_s: float) -> Optional[ExtensionScan]:
    """Every library of an installed package that links torch, and what of it this torch lacks; None
    where there is no torch to compare them with."""
    lib_dir = _torch_lib_dir(torch)
    if lib_dir is None:
        return None
    deadline = time.monotonic() + budget_s
    out = ExtensionScan()
    found: List[Tuple[str, str, Optional[str], Optional[str]]] = []  # (path, dist, version, requirement)
    seen: set = set()
    for folder in _folders(target):
        listed = _listing(folder, seen, deadline)
        if listed is None:
            out.complete = False
            break
        out.files += listed["files"]
        found.extend(tuple(row) for row in listed["libs"])  # type: ignore[misc]
    torch_libs = sorted(n for n in os.listdir(lib_dir) if ".so" in n)
    key = [FORM, [_diskcache.file_key(os.path.join(lib_dir, n)) for n in torch_libs],
           [[_diskcache.file_key(path), dist, ver, req] for path, dist, ver, req in found]]
    kept = _diskcache.get("extensions", key)
    if kept is not None and isinstance(kept.get("libs"), list):
        out.libs = [ExtensionLib(**lib) for lib in kept["libs"]]
        return out
    with ExitStack() as stack:
        lookup = _Lookup(lib_dir, torch_libs, stack)
        for path, dist, ver, req in found:
            if time.monotonic() > deadline:
                out.complete = False
                break
            lib = read_library(path, lookup)
            lib.distribution, lib.version, lib.torch_requirement = dist, ver, req
            out.libs.append(lib)
    if out.complete:
        _diskcache.put("extensions", key, {"libs": [vars(lib) for lib in out.libs]})
    return out


def _torch_lib_dir(torch: Optional[TorchInfo]) -> Optional[str]:
    if torch is None or not torch.path:
        return None
    lib_dir = torch.lib_dir or os.path.join(torch.path, "lib")
    return lib_dir if os.path.isdir(lib_dir) else None


def _folders(target: Dict[str, Any]) -> List[str]:
    """The directories on the target's `sys.path` in its order (the first copy of a package wins)."""
    out: List[str] = []
    for path in list(target.get("sys_path") or []) + list(target.get("site_packages") or []):
        if isinstance(path, str) and path not in out and os.path.isdir(path):
            out.append(path)
    return out


def _listing(folder: str, seen: set, deadline: float) -> Optional[Dict[str, Any]]:
    """The libraries linking torch of the packages installed in `folder` that an earlier folder did
    not have (`seen` gains them), kept under the folder's mtime; None when the time ran out."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".dist-info"))
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return {"files": 0, "libs": []}
    dists = [_dist_of(n) for n in names]
    fresh = [(n, d) for n, d in zip(names, dists) if d is not None and d[0] not in seen]
    seen.update(d[0] for _, d in fresh)
    key = [FORM, os.path.realpath(folder), mtime, [n for n, _ in fresh]]
    kept = _diskcache.get("extension-list", key)
    if kept is not None and isinstance(kept.get("libs"), list):
        return kept
    listed: Dict[str, Any] = {"files": 0, "libs": []}
    for name, (dist, version) in fresh:
        if time.monotonic() > deadline:
            return None
        if dist in SKIP:
            continue
        info = os.path.join(folder, name)
        objects = _shared_objects(folder, info)
        libs = [p for p in objects if _links_torch(p)]
        listed["files"] += len(objects)
        if libs:
            req = torch_requirement(info)
            listed["libs"].extend([p, dist, version, req] for p in libs)
    _diskcache.put("extension-list", key, listed)
    return listed


def _dist_of(dist_info: str) -> Optional[Tuple[str, str]]:
    """(normalised name, version) from `{name}-{version}.dist-info`, as the wheel spec names it."""
    parts = dist_info[: -len(".dist-info")].split("-")
    if len(parts) != 2 or not parts[1][:1].isdigit():
        return None
    return normalize(parts[0]), parts[1]


def _shared_objects(folder: str, dist_info: str) -> List[str]:
    """The shared objects a package installed, from its RECORD (paths relative to `folder`)."""
    out: List[str] = []
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split(",", 1)[0]
                base = path.rsplit("/", 1)[-1]
                if base.endswith(".so") or ".so." in base:
                    out.append(os.path.normpath(os.path.join(folder, path)))
    except OSError:
        pass
    return out


def _links_torch(path: str) -> bool:
    try:
        dyn = _elf.dynamic_entries(path)
    except (OSError, ValueError, IndexError):
        return False
    return dyn is not None and any(TORCH_LIB.match(n) for n in dyn[0])


_REQUIRES = re.compile(r"^Requires-Dist:\s*torch\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$", re.I)


def torch_requirement(dist_info: str) -> Optional[str]:
    """The package's pin on torch (`==2.8.0`, `>=2.14.0`), from its METADATA; None when it has none
    (a requirement only under an extra does not count: pip installs it only on request)."""
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the headers end at the first blank line; the description follows
                m = _REQUIRES.match(line.strip())
                if m and "extra" not in (m.group(2) or "") and m.group(1).strip():
                    return m.group(1).replace(" ", "")
    except OSError:
        pass
    return None


class _Lookup:
    """Which names torch's libraries (and a library's own siblings) export, each library opened once."""

    def __init__(self, lib_dir: str, names: Sequence[str], stack: ExitStack) -> None:
        self.lib_dir, self.names, self.stack = lib_dir, set(names), stack
        self._indexes: Dict[str, Optional[_elf.SymbolIndex]] = {}
        self._torch = [os.path.join(lib_dir, n) for n in _torch_first(names)]

    def index(self, path: str) -> Optional[_elf.SymbolIndex]:
        real = os.path.realpath(path)
        if real not in self._indexes:
            try:
                elf = self.stack.enter_context(_elf.open_elf(real))
                found: Optional[_elf.SymbolIndex] = _elf.SymbolIndex(elf)
            except _elf.ELF_ERRORS:
                found = None
            self._indexes[real] = found if found is not None and found.usable else None
        return self._indexes[real]

    def missing(self, names: Iterable[str], siblings: Sequence[str]) -> List[str]:
        left = list(names)
        for path in [*self._torch, *siblings]:
            if not left:
                break
            index = self.index(path)
            if index is not None:
                left = [n for n in left if not index.defines(n)]
        return left


def _torch_first(names: Iterable[str]) -> List[str]:
    """torch's libraries, the ones most symbols come from first."""
    order = ("libtorch_cpu.so", "libc10.so", "libtorch_python.so", "libtorch_cuda.so", "libc10_cuda.so",
             "libtorch.so")
    libs = [n for n in names if TORCH_LIB.match(n)]
    return sorted(libs, key=lambda n: (order.index(n) if n in order else len(order), n))


def read_library(path: str, lookup: _Lookup) -> ExtensionLib:
    """One library's facts; an unreadable file is an `error`, never an exception."""
    lib = ExtensionLib(path=path)
    try:
        dyn = _elf.dynamic_entries(path)
        if dyn is None:
            lib.error = "not an ELF shared object with a dynamic section"
            return lib
        needed, rpaths = dyn
        lib.torch_needed = [n for n in needed if TORCH_LIB.match(n)]
        lib.missing_libs = [n for n in lib.torch_needed if n not in lookup.names]
        cudart = next((m.group(1) for m in map(_CUDART.match, needed) if m), None)
        lib.cudart = cudart
        with _elf.open_elf(path) as elf:
            imports = _elf.undefined_dynamic(elf, _elf.TORCH_SYMBOL)
            fatbin = elf.get_section_by_name(".nv_fatbin")
            if fatbin is not None and fatbin["sh_type"] != "SHT_NOBITS":
                stream = elf.stream
                stream.seek(fatbin["sh_offset"])
                lib.cuda_archs, lib.ptx_archs = fatbin_archs(stream, fatbin["sh_size"])
        lib.torch_symbols = len(imports)
        siblings = _siblings(path, needed, rpaths, lookup.names)
        missing = lookup.missing(imports, siblings)
        lib.missing_count = len(missing)
        lib.missing_symbols = missing[:KEEP_MISSING]
    except _elf.ELF_ERRORS as exc:
        lib.error = f"{type(exc).__name__}: {exc}"
    return lib


def _siblings(path: str, needed: Sequence[str], rpaths: Sequence[str], torch_libs: set) -> List[str]:
    """The libraries it links that its own package ships (beside it, or where its `$ORIGIN` RPATH
    points): they may define the symbols it imports in torch's namespaces."""
    here = os.path.dirname(path)
    dirs = [here] + [os.path.normpath(p.replace("$ORIGIN", here).replace("${ORIGIN}", here))
                     for p in rpaths if "ORIGIN" in p]
    out = []
    for name in needed:
        if name in torch_libs:
            continue
        for d in dirs:
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate):
                out.append(candidate)
                break
    return out


def _fallback(message: str, known: Dict[str, Any]) -> ExtensionScan:
    return ExtensionScan(complete=False, notes=[message])


STEP = Step("extensions", ("target", "torch_files", "step"), scan, _fallback, "compiled extensions")
