"""NVIDIA fat binaries: which GPU architectures their cubins and PTX are for, from headers alone.

A fatbin is a run of containers; each is a 16-byte header (magic 0xBA55ED50, version 1, its header
size, the size of what follows) and then entries back to back, each a header and its payload:

    offset  size  field
    0       2     kind: 1 = PTX, 2 = ELF cubin
    2       2     entry header version, 0x0101
    4       4     header size (64, 72, 80, 88, 104, 112, 120 seen: newer toolkits add options)
    8       4     payload size, padded to 8: the next entry starts at header size + this
    16      4     payload size compressed, 0 when it is stored as it is
    24      2+2   minor, major version of the payload's format
    28      4     SM architecture, major * 10 + minor (90 for sm_90)
    40      8     flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4-compressed, 0x8000
                  Zstandard-compressed, 0x100000 architecture-specific code (sm_90a)
    56      8     payload size uncompressed

The layout follows the readers that document it: ZLUDA (`cuda_types/src/dark_api.rs`,
`FatbinFileHeader` and its flags; `dark_api/src/fatbin.rs`), the fat binary ClangJIT writes
(`FatBinFileHeader` in hfinkel/llvm-project-cxxjit's `clang/lib/CodeGen/JIT.cpp`), and CUDA's
`fatbinary_section.h` (`fatBinaryHeader`) for the container; docs/artifacts.md says how it was
checked against `cuobjdump --list-elf` on real libraries. Payloads are never read or
decompressed: the headers say everything a load decides.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import IO, Iterator, List, Optional, Tuple

FATBIN_MAGIC = 0xBA55ED50
FATBIN_VERSION = 1
ENTRY_VERSION = 0x0101
KIND_PTX, KIND_CUBIN = 1, 2
FLAG_LZ4, FLAG_ZSTD = 0x2000, 0x8000
#: Set on the entries of `sm_90a`/`compute_90a` code (seen on every sm_90a cubin that cuobjdump
#: lists in the CUDA 12.4 libraries of torch 2.5 and 2.6, and on no other).
FLAG_ARCH_SPECIFIC = 0x100000
_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIIIIIHHIIIQQQ")  # the 64 bytes every entry header starts with
ENTRY_MIN = _ENTRY.size
#: A cubin's e_flags: the SM in the low byte and `a` at 0x800 up to ELF ABI version 7
#: (EF_CUDA_SM, EF_CUDA_ACCELERATORS_V1); from version 8 (CUDA 12.8) the SM in the second byte and
#: `a` at 0x8 (EF_CUDA_SM_MASK, EF_CUDA_ACCELERATORS): LLVM's llvm/BinaryFormat/ELF.h.
_EF_ACCEL_V1, _EF_ACCEL = 0x800, 0x8


@dataclass(frozen=True)
class FatbinEntry:
    """One entry of a fatbin, as its header describes it."""

    kind: int  # KIND_PTX, KIND_CUBIN, or another the doctor does not read
    sm: int  # 90
    flags: int
    offset: int  # of its header, from where the reading started
    header_size: int
    size: int  # its payload's, padded to 8
    compressed_size: int  # 0: the payload is stored uncompressed
    uncompressed_size: int

    @property
    def payload_offset(self) -> int:
        return self.offset + self.header_size

    @property
    def arch(self) -> Optional[str]:
        """`sm_90`, `sm_90a` for a cubin, `compute_90` for PTX; None for another kind."""
        prefix = {KIND_CUBIN: "sm", KIND_PTX: "compute"}.get(self.kind)
        if prefix is None or not self.sm:
            return None
        return f"{prefix}_{self.sm}" + ("a" if self.flags & FLAG_ARCH_SPECIFIC else "")

    @property
    def compression(self) -> Optional[str]:
        if self.flags & FLAG_ZSTD:
            return "zstd"
        if self.flags & FLAG_LZ4:
            return "lz4"
        return None


def fatbin_entries(stream: IO[bytes], size: int) -> Iterator[FatbinEntry]:
    """Every entry of the containers in `size` bytes from the stream's position. Bytes that are not
    a container header are skipped 8 at a time (containers are 8-byte aligned in `.nv_fatbin`, with
    zeros between); an entry header that is not one (a wrong version, a size under 64) ends its
    container. Only headers are read: a few dozen bytes per entry."""
    start = stream.tell()
    pos = 0
    while pos + _CONTAINER.size <= size:
        stream.seek(start + pos)
        head = stream.read(_CONTAINER.size)
        if len(head) < _CONTAINER.size:
            return
        magic, version, header_size, body = _CONTAINER.unpack(head)
        if magic != FATBIN_MAGIC or version != FATBIN_VERSION or header_size < _CONTAINER.size:
            pos += 8
            continue
        end = min(pos + header_size + body, size)
        entry = pos + header_size
        while entry + ENTRY_MIN <= end:
            stream.seek(start + entry)
            raw = stream.read(ENTRY_MIN)
            if len(raw) < ENTRY_MIN:
                return
            (kind, ev, ehsize, padded, _, packed, _, _, _, sm, _, _, flags, _, plain) = _ENTRY.unpack(raw)
            if ev != ENTRY_VERSION or ehsize < ENTRY_MIN:
                break
            yield FatbinEntry(kind, sm, flags, entry, ehsize, padded, packed, plain)
            entry += ehsize + padded
        pos = max(end, pos + _CONTAINER.size)


def fatbin_archs(stream: IO[bytes], size: int) -> Tuple[List[str], List[str]]:
    """(cubin architectures, PTX architectures) of the fatbins in `size` bytes from the stream's
    position, each once, in version order."""
    from inductor_doctor.core.artifact_facts import version_key

    cubins, ptx = set(), set()
    for e in fatbin_entries(stream, size):
        arch = e.arch
        if arch is not None:
            (cubins if e.kind == KIND_CUBIN else ptx).add(arch)
    return (
        sorted(cubins, key=lambda a: (version_key(a), a)),
        sorted(ptx, key=lambda a: (version_key(a), a)),
    )


def cubin_arch(e_flags: int, abi_version: int) -> Optional[str]:
    """A cubin's architecture from its ELF header (`sm_90`, `sm_90a`)."""
    if abi_version >= 8:
        sm, accel = (e_flags >> 8) & 0xFF, e_flags & _EF_ACCEL
    else:
        sm, accel = e_flags & 0xFF, e_flags & _EF_ACCEL_V1
    return f"sm_{sm}" + ("a" if accel else "") if sm else None
