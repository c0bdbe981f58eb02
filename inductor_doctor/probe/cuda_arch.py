"""The GPU architectures torch was built for, read from its libraries without loading them.

`torch.cuda.get_arch_list()` splits one string compiled into libtorch_python.so
(`torch._C._cuda_getArchFlags()`, the build's TORCH_CUDA_ARCH_LIST as `sm_50 sm_60 ... sm_90`, with
`compute_XX` for an architecture shipped as PTX). torch's own warnings about unsupported GPUs
(`_check_capability`, `_check_cubins` in torch/cuda/__init__.py) read that list, so the probe reads
the same string from the library's `.rodata`: about 1 MB, ~10 ms.

Where the string is not found (a custom build), the kernels themselves tell: libtorch_cuda.so's
`.nv_fatbin` section is a run of fat binaries, one per CUDA source file, each a header followed by
entries (kind 1 = PTX, 2 = cubin) that name their architecture. Every file of a build is compiled
for the same list, so the first few containers are enough; their headers are a few bytes each.
"""

from __future__ import annotations

import os
import re
import struct
from typing import List, Optional, Tuple

from inductor_doctor.probe import _elf

_ARCH_STRING = re.compile(rb"((?:sm|compute)_\d{2,3}[af]?(?: (?:sm|compute)_\d{2,3}[af]?)*)\x00")
FATBIN_MAGIC = 0xBA55ED50
FATBIN_SAMPLE = 8  # containers read from the start of .nv_fatbin
_MAX_RODATA = 64 * 1024 * 1024


def _section(path: str, name: str) -> Optional[Tuple[int, int]]:
    """`(file offset, size)` of a section, or None."""
    with _elf.open_elf(path) as elf:
        sec = elf.get_section_by_name(name)
        if sec is None:
            return None
        return int(sec["sh_offset"]), int(sec["sh_size"])


def arch_flags(libtorch_python: str) -> Optional[List[str]]:
    """The list `torch.cuda.get_arch_list()` returns, from the library's `.rodata`; None if absent."""
    where = _section(libtorch_python, ".rodata")
    if where is None:
        return None
    off, size = where
    with open(libtorch_python, "rb") as f:
        f.seek(off)
        data = f.read(min(size, _MAX_RODATA))
    best: Optional[bytes] = None
    for m in _ARCH_STRING.finditer(data):
        s = m.group(1)
        if best is None or s.count(b" ") > best.count(b" "):
            best = s
    if best is None or (b" " not in best and len(set(_ARCH_STRING.findall(data))) > 1):
        return None  # a lone "sm_90" among others could be any string; do not guess
    return best.decode().split()


def fatbin_archs(libtorch_cuda: str, sample: int = FATBIN_SAMPLE) -> Optional[List[str]]:
    """`sm_XX` for each cubin and `compute_XX` for each PTX in the first fat binaries; None if none."""
    where = _section(libtorch_cuda, ".nv_fatbin")
    if where is None:
        return None
    off, size = where
    end_all = off + size
    found: List[str] = []
    with open(libtorch_cuda, "rb") as f:
        pos = off
        for _ in range(sample):
            if pos + 16 > end_all:
                break
            f.seek(pos)
            magic, _version, header, fat_size = struct.unpack("<IHHQ", f.read(16))
            if magic != FATBIN_MAGIC:
                break
            entry, end = pos + header, pos + header + fat_size
            while entry + 32 <= end:
                f.seek(entry)
                raw = f.read(32)
                kind, _ev, eh_size, payload = struct.unpack_from("<HHIQ", raw, 0)
                arch = struct.unpack_from("<I", raw, 28)[0]
                if eh_size == 0:
                    break
                name = {1: "compute", 2: "sm"}.get(kind)
                if name and 10 <= arch <= 999:
                    tag = f"{name}_{arch}"
                    if tag not in found:
                        found.append(tag)
                entry += eh_size + payload
            pos = (end + 7) // 8 * 8
    if not found:
        return None
    return sorted(found, key=lambda t: (int(t.split("_")[1]), t.startswith("compute")))


def torch_arch_list(torch_dir: str) -> Tuple[Optional[List[str]], Optional[str], List[str]]:
    """`(arch list, the file it came from, notes)` for a CUDA build of torch. Each reading is kept
    under its library's stamp: a repeated check opens no ELF file (nor imports pyelftools)."""
    from inductor_doctor.probe import _diskcache

    lib = os.path.join(torch_dir, "lib")
    notes: List[str] = []
    py = os.path.join(lib, "libtorch_python.so")
    try:
        flags = _diskcache.of_file("torch-arch-flags", py, arch_flags) if os.path.exists(py) else None
    except _elf.ELF_ERRORS as exc:
        flags = None
        notes.append(f"could not read {py}: {type(exc).__name__}: {exc}")
    if flags:
        return flags, py, notes
    cuda = os.path.join(lib, "libtorch_cuda.so")
    try:
        kernels = (_diskcache.of_file("torch-fatbin-archs", cuda, fatbin_archs) if os.path.exists(cuda)
                   else None)
    except (*_elf.ELF_ERRORS, struct.error) as exc:
        kernels = None
        notes.append(f"could not read {cuda}: {type(exc).__name__}: {exc}")
    if kernels:
        notes.append("the architecture list comes from the first kernels in libtorch_cuda.so")
        return kernels, cuda, notes
    return None, None, notes
