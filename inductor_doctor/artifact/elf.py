"""The ELF facts of an artifact's `.so` files and cubins, read from their headers and a few sections.

Only what decides a load is read: the version needs (`.gnu.version_r`: GLIBC_, GLIBCXX_, CXXABI_),
`DT_NEEDED`, the undefined dynamic symbols that torch's libraries must export, `.comment` (the
compiler), the compiler's command line where debug info records it (`DW_AT_producer` in
`.debug_str`: the `-march`/`-m<isa>` flags the kernels were built with), and the GPU architectures of
the `.nv_fatbin` entries (their headers only, never the cubins themselves) or of a cubin's own
`e_flags`. A model `.so` that embeds a gigabyte of weights costs the same few reads as a small one.
"""

from __future__ import annotations

import re
import struct
from typing import IO, List, Optional, Tuple

from inductor_doctor.core.artifact_facts import SharedObject, version_key
from inductor_doctor.probe._elf import max_version

#: Undefined symbols that torch's libraries (libtorch_cpu, libtorch_cuda, libc10) must provide:
#: AOTInductor's C shim (`aoti_torch_*`) and C++ symbols in torch's namespaces.
TORCH_SYMBOL = re.compile(r"^(aoti_|_Z[A-Z]*N?[KVRO]*(3c10|2at|5torch|6caffe2)\d)")
EM_CUDA = 190
FATBIN_MAGIC = 0xBA55ED50
FATBIN_PTX, FATBIN_ELF = 1, 2
#: The debug info a model `.so` is built with is small; a section larger than this is not searched.
MAX_DEBUG_STR = 64 * 1024 * 1024
_PRODUCER = re.compile(rb"(GNU C(?:\+\+)?\d*|clang version) [^\x00]{0,8000}")
#: `-m` options that are not instruction sets.
_NOT_ISA = re.compile(
    r"^(no-|tune=|arch=|abi=|cmodel=|fpmath=|prefer-|branch-|indirect-|function-|"
    r"stack|red-zone|tls-|64$|32$|x32$|80387|fentry|mitigate|needed|shstk$)"
)


def read_object(stream: IO[bytes], name: str, size: int) -> SharedObject:
    """One ELF file's load facts; an unreadable file is an `error`, never an exception."""
    from elftools.common.exceptions import ELFError

    obj = SharedObject(name=name, size=size)
    try:
        _read(stream, obj)
    except (
        ELFError,
        OSError,
        ValueError,
        KeyError,
        AttributeError,
        TypeError,
        IndexError,
        struct.error,
    ) as exc:
        obj.error = f"{type(exc).__name__}: {exc}"
    return obj


def _read(stream: IO[bytes], obj: SharedObject) -> None:
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection
    from elftools.elf.sections import SymbolTableSection

    elf = ELFFile(stream)
    if elf["e_machine"] in ("EM_CUDA", EM_CUDA):
        obj.kind = "cubin"
        arch = cubin_arch(elf["e_flags"], elf["e_ident"]["EI_ABIVERSION"])
        if arch:
            obj.cuda_archs = [arch]
        return
    needs: List[str] = []
    for sec in elf.iter_sections():
        if isinstance(sec, GNUVerNeedSection):
            for _, auxs in sec.iter_versions():
                needs.extend(aux.name for aux in auxs)
        elif isinstance(sec, DynamicSection):
            obj.needed = [t.needed for t in sec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        elif isinstance(sec, SymbolTableSection) and sec.name == ".dynsym":
            obj.torch_symbols = sorted(
                {
                    s.name
                    for s in sec.iter_symbols()
                    if s["st_shndx"] == "SHN_UNDEF" and s.name and TORCH_SYMBOL.match(s.name)
                }
            )
        elif sec.name == ".comment":
            texts = [t.decode("utf-8", "replace") for t in sec.data().split(b"\x00") if t.strip()]
            obj.compiler = texts[-1] if texts else None
        elif sec.name == ".debug_str" and sec["sh_size"] <= MAX_DEBUG_STR:
            _producer(sec.data(), obj)
        elif sec.name == ".nv_fatbin":
            stream.seek(sec["sh_offset"])
            cubins, ptx = fatbin_archs(stream, sec["sh_size"])
            obj.cuda_archs, obj.ptx_archs = cubins, ptx
    obj.glibc = max_version(needs, "GLIBC")
    obj.glibcxx = max_version(needs, "GLIBCXX")
    obj.cxxabi = max_version(needs, "CXXABI")


def _producer(data: bytes, obj: SharedObject) -> None:
    m = _PRODUCER.search(data)
    if not m:
        return
    text = m.group(0).decode("utf-8", "replace")
    obj.producer = text
    flags = []
    for tok in text.split():
        if tok.startswith("-march="):
            obj.march = tok[len("-march=") :]
        elif tok.startswith("-m") and not _NOT_ISA.match(tok[2:]):
            flags.append(tok[2:])
    obj.isa_flags = sorted(set(flags))


def cubin_arch(e_flags: int, abi_version: int) -> Optional[str]:
    """A cubin's architecture from its ELF header: the low byte of `e_flags` (EF_CUDA_SM) up to
    CUDA 12.8; the second byte in the newer layout that CUDA 12.8 introduced (ELF ABI version 8)."""
    sm = (e_flags >> 8) & 0xFF if abi_version >= 8 else e_flags & 0xFF
    return f"sm_{sm}" if sm else None


def fatbin_archs(stream: IO[bytes], size: int) -> Tuple[List[str], List[str]]:
    """(cubin architectures, PTX architectures) of the fat binaries in a `.nv_fatbin` section that
    starts at the stream's position: each container's header, then each entry's header; the
    entries' payloads are skipped, never read."""
    start = stream.tell()
    cubins, ptx = set(), set()
    pos = 0
    while pos + 16 <= size:
        stream.seek(start + pos)
        head = stream.read(16)
        if len(head) < 16:
            break
        magic, _version, header_size, fat_size = struct.unpack("<IHHQ", head)
        if magic != FATBIN_MAGIC:
            pos += 8  # containers are 8-byte aligned; padding between them is zeros
            continue
        entry = pos + header_size
        end = entry + fat_size
        while entry + 32 <= end:
            stream.seek(start + entry)
            eh = stream.read(32)
            if len(eh) < 32:
                break
            kind, _, ehsize, payload = struct.unpack_from("<HHIQ", eh, 0)
            arch = struct.unpack_from("<I", eh, 28)[0]
            if ehsize == 0:
                break
            if kind == FATBIN_ELF and arch:
                cubins.add(f"sm_{arch}")
            elif kind == FATBIN_PTX and arch:
                ptx.add(f"compute_{arch}")
            entry += ehsize + payload
        pos = max(end, pos + 16)
    return sorted(cubins, key=version_key), sorted(ptx, key=version_key)
