"""Which copy of each CUDA library `import torch` would map, without importing torch.

A pip-installed torch loads the CUDA libraries of its `nvidia-*` wheels. Another copy of the same
SONAME (a system toolkit in LD_LIBRARY_PATH, a conda env, an LD_PRELOAD) can be mapped instead, and
when it is older than the wheel's, the import fails (`libcusparse.so.12: undefined symbol:
__nvJitLinkComplete_12_4, version libnvJitLink.so.12`, pytorch/pytorch#134929) or a kernel fails
later. Whether that happens follows from glibc's rules, so the probe replays them:

* a library already mapped under a SONAME is reused (so whoever loads it first decides);
* for a DT_NEEDED of object X (glibc elf/dl-load.c, `_dl_map_object`): if X has no DT_RUNPATH, the
  DT_RPATHs of X and of the objects that loaded it, then the executable's; then LD_LIBRARY_PATH;
  then X's own DT_RUNPATH (which serves X's direct dependencies only); then the loader cache and
  the default directories. An object with DT_RUNPATH has its DT_RPATH ignored
  (elf/get-dynamic-info.h).

torch's libraries carry DT_RPATHs to the wheels, so their direct dependencies come from the wheels
whatever LD_LIBRARY_PATH says; the wheels' own libraries carry DT_RUNPATHs, so *their* dependencies
(libcusparse -> libnvJitLink) go to LD_LIBRARY_PATH first. torch >= 2.6 works around that by
preloading nvJitLink and NVRTC from the wheels (pytorch/pytorch#138460, #145580), and 2.13 every
wheel library; the replay reads that workaround from torch's own `__init__.py`.

Libraries that another package loaded before torch in the same process cannot be seen statically;
the live probe reads /proc/self/maps after `import torch` for what was really mapped
(pytorch/pytorch#78489).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.facts import CudaLibInfo
from inductor_doctor.probe import _elf, loader

#: Libraries the replay never follows into: the C runtime and its companions.
SYSTEM_PREFIXES = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "ld-linux",
                   "libstdc++.so", "libgcc_s.so", "libutil.so", "libz.so", "libcuda.so",
                   "libnvidia-", "libgomp", "libomp")
MAX_OBJECTS = 200
MAX_MISSING = 5


@dataclass
class Dyn:
    """The dynamic section's answers for one shared object."""

    path: str
    soname: Optional[str] = None
    needed: List[str] = field(default_factory=list)
    rpath: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)


_dyn_cache: Dict[str, Optional[Dyn]] = {}


def read_dyn(path: str) -> Optional[Dyn]:
    """DT_SONAME, DT_NEEDED, DT_RPATH, DT_RUNPATH of a shared object; None when unreadable."""
    if path in _dyn_cache:
        return _dyn_cache[path]
    try:
        out = _read_dyn64(path)
    except (OSError, struct.error, ValueError, IndexError):
        out = None
    if out is not None and out.runpath:
        out.rpath = []  # glibc ignores DT_RPATH when DT_RUNPATH is present
    _dyn_cache[path] = out
    return out


_DT = {1: "needed", 14: "soname", 15: "rpath", 29: "runpath"}


def _read_dyn64(path: str) -> Optional[Dyn]:
    """The dynamic section of a little-endian ELF64 object, read through its program headers.

    A few small reads instead of a full parser: torch's libraries are hundreds of MB and the
    replay reads a few dozen of them (pyelftools takes ~1.5 ms each, this ~0.1 ms).
    """
    with open(path, "rb") as f:
        ehdr = f.read(64)
        if ehdr[:4] != b"\x7fELF" or ehdr[4] != 2 or ehdr[5] != 1:
            return None
        phoff, = struct.unpack_from("<Q", ehdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 54)
        f.seek(phoff)
        phdrs = f.read(phentsize * phnum)
        loads, dynamic = [], None
        for i in range(phnum):
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
                "<IIQQQQ", phdrs, i * phentsize)
            if p_type == 1:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:
                dynamic = (p_offset, p_filesz)
        if dynamic is None:
            return None
        f.seek(dynamic[0])
        raw = f.read(dynamic[1])
        entries, strtab, strsz = [], None, 0
        for i in range(0, len(raw) - 15, 16):
            tag, val = struct.unpack_from("<qQ", raw, i)
            if tag == 0:
                break
            if tag == 5:
                strtab = val
            elif tag == 10:
                strsz = val
            elif tag in _DT:
                entries.append((_DT[tag], val))
        if strtab is None:
            return None
        table_off = next((off + strtab - va for va, off, size in loads if va <= strtab < va + size), None)
        if table_off is None:
            return None
        texts = []
        for kind, index in entries:  # each string on its own: .dynstr is tens of MB in libtorch_cpu
            if strsz and index >= strsz:
                continue
            f.seek(table_off + index)
            chunk = f.read(4096)
            end = chunk.find(b"\0")
            texts.append((kind, chunk[:end if end >= 0 else len(chunk)].decode("utf-8", "replace")))
    out = Dyn(path)
    for kind, text in texts:
        if kind == "needed":
            out.needed.append(text)
        elif kind == "soname":
            out.soname = text
        elif kind == "rpath":
            out.rpath.extend(p for p in text.split(":") if p)
        else:
            out.runpath.extend(p for p in text.split(":") if p)
    return out


def _expand(entry: str, origin: str) -> str:
    for token in ("$ORIGIN", "${ORIGIN}"):
        entry = entry.replace(token, origin)
    return os.path.normpath(entry)


@dataclass
class _Obj:
    dyn: Dyn
    loader: Optional[_Obj]
    via: str


@dataclass
class Resolution:
    path: Optional[str]
    via: str
    needed_by: Optional[str]


class Replay:
    """glibc's loading of one process, replayed on files."""

    def __init__(self, ld_library_path: Sequence[str], executable: Optional[str], machine: str = "") -> None:
        self.ld_library_path = [d for d in ld_library_path if d]
        self.machine = machine
        self.exe = read_dyn(executable) if executable else None
        self.by_soname: Dict[str, str] = {}  # soname -> path mapped under it
        self.how: Dict[str, Resolution] = {}  # soname -> how it was found
        self.objects: Dict[str, _Obj] = {}  # realpath -> object

    def _search(self, name: str, requester: Optional[_Obj]) -> Tuple[Optional[str], str]:
        if "/" in name:
            return (name if os.path.exists(name) else None), "path"
        dirs: List[Tuple[str, str]] = []
        if requester is None or not requester.dyn.runpath:
            chain = requester
            while chain is not None:
                origin = os.path.dirname(chain.dyn.path)
                dirs += [(_expand(d, origin), f"RPATH of {os.path.basename(chain.dyn.path)}")
                         for d in chain.dyn.rpath]
                chain = chain.loader
            if self.exe is not None:
                origin = os.path.dirname(self.exe.path)
                dirs += [(_expand(d, origin), "RPATH of the Python executable") for d in self.exe.rpath]
        dirs += [(d, "LD_LIBRARY_PATH") for d in self.ld_library_path]
        if requester is not None:
            origin = os.path.dirname(requester.dyn.path)
            dirs += [(_expand(d, origin), f"RUNPATH of {os.path.basename(requester.dyn.path)}")
                     for d in requester.dyn.runpath]
        for d, how in dirs:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p, how
        # A stale cache entry (its file gone) is passed over, as ld.so does: it opens the next place.
        hits = [h for h in loader.ldconfig_find(name, self.machine) if os.path.isfile(h)]
        if hits:
            return hits[0], "the loader cache (ldconfig)"
        for d in loader.COMMON_DIRS:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p, "a default directory"
        return None, "not found"

    def load(self, name: str, requester: Optional[_Obj] = None, via: str = "") -> None:
        """dlopen(name) from `requester`, then the breadth-first walk of the new objects' NEEDED."""
        queue: Deque[_Obj] = deque()
        self._map(name, requester, via, queue)
        while queue and len(self.objects) < MAX_OBJECTS:
            obj = queue.popleft()
            for needed in obj.dyn.needed:
                self._map(needed, obj, "", queue)

    def _map(self, name: str, requester: Optional[_Obj], via: str, queue: Deque[_Obj]) -> None:
        base = os.path.basename(name)
        if "/" not in name and base in self.by_soname:
            return
        if base.startswith(SYSTEM_PREFIXES):
            return
        path, how = self._search(name, requester)
        who = os.path.basename(requester.dyn.path) if requester is not None else None
        if path is None:
            self.how.setdefault(base, Resolution(None, how, who))
            return
        real = os.path.realpath(path)
        if real in self.objects:
            return
        dyn = read_dyn(path)
        if dyn is None:
            return
        soname = dyn.soname or base
        if soname in self.by_soname and "/" not in name:
            return
        self.by_soname.setdefault(soname, path)
        self.how.setdefault(soname, Resolution(path, via or how, who))
        obj = _Obj(dyn, requester, via or how)
        self.objects[real] = obj
        queue.append(obj)


# --- torch's own preloading ---------------------------------------------------------------------

_PRELOAD_CALL = re.compile(r"_preload_cuda_(?:deps|lib)\(\s*\"(\w+)\",\s*\"([^\"]+)\"")
_PRELOAD_TABLE = re.compile(r"\(\s*\"(\w+)\",\s*\"(lib[^\"]+)\"\s*\)")


def torch_preloads(init_py: str) -> Tuple[List[Tuple[str, str]], Optional[str]]:
    """What torch's `_load_global_deps` preloads from the wheels once libtorch_global_deps loaded.

    `(folder, glob) pairs, condition)`: condition is "wheel cudart" (torch 2.6-2.12 preload only when
    the cudart it mapped is the wheel's), "cudart" (2.13: any cudart), or None (no workaround).
    """
    start = init_py.find("def _load_global_deps")
    if start < 0:
        return [], None
    body = init_py[start:]
    stop = body.find("except OSError")
    block = body[:stop] if stop > 0 else body[:4000]
    if "_preload_cuda" not in block:
        return [], None
    cond = "wheel cudart" if "nvidia/cuda_runtime/lib/libcudart.so" in block else "cudart"
    calls = _PRELOAD_CALL.findall(block)
    if not calls and re.search(r"_preload_cuda_deps\(\s*\)", block):
        fn = init_py.find("def _preload_cuda_deps")
        table = init_py[fn:init_py.find("\ndef ", fn + 10)] if fn >= 0 else ""
        calls = _PRELOAD_TABLE.findall(table)
    return calls, cond


def find_wheel_lib(roots: Sequence[str], folder: str, pattern: str,
                   cuda_major: Optional[str]) -> Optional[str]:
    """torch's `_preload_cuda_lib`: per sys.path entry nvidia/<folder>/lib, nvidia/cu<N>/lib, <folder>/lib."""
    for root in roots:
        cands = glob.glob(os.path.join(root, "nvidia", folder, "lib", pattern))
        if cuda_major:
            cands += glob.glob(os.path.join(root, "nvidia", f"cu{cuda_major}", "lib", pattern))
        cands += glob.glob(os.path.join(root, folder, "lib", pattern))
        if cands:
            return cands[0]
    return None


def wheel_libs(roots: Sequence[str]) -> Dict[str, str]:
    """SONAME-named files the nvidia-* wheels ship: basename -> path (the first root wins)."""
    out: Dict[str, str] = {}
    for root in roots:
        found = glob.glob(os.path.join(root, "nvidia", "*", "lib", "lib*.so*"))
        found += glob.glob(os.path.join(root, "cusparselt", "lib", "lib*.so*"))  # nvidia-cusparselt-cu12
        for p in sorted(found):
            out.setdefault(os.path.basename(p), p)
    return out


# --- checks on what the replay found -------------------------------------------------------------


def imports_from(path: str, soname: str) -> List[str]:
    """The symbols `path` imports with a version of `soname` (its .gnu.version_r names the file)."""
    out: List[str] = []
    with _elf.open_elf(path) as elf:
        from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerSymSection

        verneed = next((s for s in elf.iter_sections() if isinstance(s, GNUVerNeedSection)), None)
        versym = next((s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection)), None)
        dynsym = elf.get_section_by_name(".dynsym")
        if verneed is None or versym is None or dynsym is None:
            return out
        wanted = set()
        for vn, auxs in verneed.iter_versions():
            if vn.name == soname:
                wanted.update(aux["vna_other"] for aux in auxs)
        if not wanted:
            return out
        for i, sym in enumerate(dynsym.iter_symbols()):
            if sym.name and sym["st_shndx"] == "SHN_UNDEF" and versym.get_symbol(i)["ndx"] in wanted:
                out.append(sym.name)
    return out


def missing_symbols(requester: str, soname: str, provider: str) -> List[str]:
    """What `requester` imports from `soname` that `provider` does not define (an import failure)."""
    try:
        wanted = imports_from(requester, soname)
        if not wanted:
            return []
        with _elf.open_elf(provider) as elf:
            index = _elf.SymbolIndex(elf)
            if not index.usable:
                return []
            return [s for s in wanted if not index.defines(s)][:MAX_MISSING]
    except _elf.ELF_ERRORS:
        return []


def same_build(a: str, b: str, head: int = 1 << 18) -> Optional[bool]:
    """Whether two files are the same library build: same size and the same first 256 KiB."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        digests = []
        for p in (a, b):
            with open(p, "rb") as f:
                digests.append(hashlib.sha1(f.read(head)).hexdigest())
        return digests[0] == digests[1]
    except OSError:
        return None


#: Where the loader looks besides the directories the replay names: its default directories.
_SYSTEM_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu",
                "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib", "/etc/ld.so.cache")


def resolve(torch_dir: str, roots: Sequence[str], env: Mapping[str, str], executable: Optional[str],
            machine: str = "", cuda_major: Optional[str] = None) -> Tuple[List[CudaLibInfo], List[str]]:
    """`(one CudaLibInfo per wheel library the import maps, notes)`; empty when torch ships none.

    The replay reads a few dozen ELF files (a quarter of a second on a CUDA torch); its answer is a
    function of those files and the directories searched, so it is kept with their mtimes (every
    object mapped, its directory, LD_LIBRARY_PATH's, the loader's defaults and cache) and reused
    while they all hold: a library dropped into a searched directory changes that directory."""
    from dataclasses import asdict

    from inductor_doctor.probe import _diskcache

    key = [torch_dir, list(roots), env.get("LD_LIBRARY_PATH", ""), env.get("LD_PRELOAD", ""),
           _diskcache.file_key(executable), machine, cuda_major]
    kept = _diskcache.get("cuda-libs", key)
    if kept is not None and kept.get("stamps") == _stamps(kept.get("paths") or []):
        try:
            return [CudaLibInfo(**d) for d in kept["libs"]], list(kept["notes"])
        except (TypeError, KeyError):
            pass
    libs, notes, paths = _resolve(torch_dir, roots, env, executable, machine, cuda_major)
    _diskcache.put("cuda-libs", key, {"libs": [asdict(x) for x in libs], "notes": notes, "paths": paths,
                                      "stamps": _stamps(paths)})
    return libs, notes


def _stamps(paths: Sequence[str]) -> List[Optional[int]]:
    out: List[Optional[int]] = []
    for p in paths:
        try:
            out.append(os.stat(p).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


def _resolve(torch_dir: str, roots: Sequence[str], env: Mapping[str, str], executable: Optional[str],
             machine: str, cuda_major: Optional[str]) -> Tuple[List[CudaLibInfo], List[str], List[str]]:
    notes: List[str] = []
    wheels = wheel_libs(roots)
    if not wheels:
        return [], ["torch's CUDA libraries are not nvidia-* wheels here (a system or conda CUDA is "
                    "expected in the loader's path)"], [*roots, *_SYSTEM_DIRS]
    lib = os.path.join(torch_dir, "lib")
    replay = Replay(env.get("LD_LIBRARY_PATH", "").split(":"), executable, machine)
    for entry in re.split(r"[\s:]+", env.get("LD_PRELOAD", "")):
        if entry:
            replay.load(entry, None, "LD_PRELOAD")
    replay.load(os.path.join(lib, "libtorch_global_deps.so"), None, "torch's _load_global_deps")
    init_py = ""
    try:
        with open(os.path.join(torch_dir, "__init__.py"), encoding="utf-8", errors="replace") as f:
            init_py = f.read()
    except OSError:
        notes.append("torch/__init__.py unreadable: torch's own preloading is not replayed")
    preloads, cond = torch_preloads(init_py)
    cudart = next((p for s, p in replay.by_soname.items() if s.startswith("libcudart.so")), None)
    if preloads and cudart and (cond == "cudart" or "nvidia/cuda_runtime/lib/libcudart.so" in cudart):
        for folder, pattern in preloads:
            path = find_wheel_lib(roots, folder, pattern, cuda_major)
            if path:
                replay.load(path, None, "preloaded by torch from its wheel")
    c_ext = sorted(glob.glob(os.path.join(torch_dir, "_C*.so")))
    if c_ext:
        replay.load(c_ext[0], None, "import torch._C")
    # Loaded later, on first use: NVRTC (through libcaffe2_nvrtc) and the CUDA linear algebra.
    cuda_obj = replay.objects.get(os.path.realpath(os.path.join(lib, "libtorch_cuda.so")))
    for lazy in ("libcaffe2_nvrtc.so", "libtorch_cuda_linalg.so"):
        if os.path.exists(os.path.join(lib, lazy)):
            replay.load(os.path.join(lib, lazy), cuda_obj, "loaded by torch on first use")
    out: List[CudaLibInfo] = []
    for soname, res in sorted(replay.how.items()):
        wheel = wheels.get(soname)
        if wheel is None:
            continue
        info = CudaLibInfo(soname=soname, wheel=wheel, resolved=res.path, via=res.via,
                           needed_by=res.needed_by)
        if res.path is not None:
            info.same_build = same_build(res.path, wheel)
            if info.same_build is False and res.needed_by:
                requester = next((o.dyn.path for o in replay.objects.values()
                                  if os.path.basename(o.dyn.path) == res.needed_by), None)
                if requester:
                    info.missing_symbols = missing_symbols(requester, soname, res.path)
            elif soname.startswith(VERSIONED_PROVIDERS):
                _check_wheel_pairing(info, replay)
        out.append(info)
    read = sorted(replay.objects)
    dirs = {os.path.dirname(p) for p in read} | {os.path.dirname(w) for w in wheels.values()}
    dirs |= {d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d}
    return out, notes, [*read, *sorted(dirs), *roots, os.path.join(torch_dir, "__init__.py"), *_SYSTEM_DIRS]


#: Wheel libraries whose importers bind to versioned symbols of a minimum release
#: (`__nvJitLinkAddData_12_4`): a wheel older than its importers (pip resolving an old
#: nvidia-nvjitlink-cu12 for another package) fails the import exactly as an older system copy does.
VERSIONED_PROVIDERS = ("libnvJitLink.so",)


def _check_wheel_pairing(info: CudaLibInfo, replay: Replay) -> None:
    """The wheel's own copy loads: do the wheel libraries importing it find what they need?"""
    for obj in replay.objects.values():
        if info.soname not in obj.dyn.needed or info.resolved is None:
            continue
        missing = missing_symbols(obj.dyn.path, info.soname, info.resolved)
        if missing:
            info.needed_by = os.path.basename(obj.dyn.path)
            info.missing_symbols = missing
            return
