"""The ELF facts of an artifact's `.so` files, cubins and fatbins, read from their headers and a few
sections.

Only what decides a load is read: the version needs (`.gnu.version_r`: GLIBC_, GLIBCXX_, CXXABI_),
`DT_NEEDED`, the undefined dynamic symbols that torch's libraries must export, `.comment` (the
compiler), the compiler's command line where debug info records it (`DW_AT_producer` in
`.debug_str`: the `-march`/`-m<isa>` flags the kernels were built with), and the GPU architectures
of its device code, from entry headers only, never the (often compressed) payloads: the fat
binaries of a `.nv_fatbin` section (what nvcc links in), the fatbins or cubins AOTInductor embeds
in `.rodata` between `__<kernel>_start` and `__<kernel>_end` (`aot_inductor.embed_kernel_binary`),
a package's own `.fatbin` files (`aot_inductor.emit_multi_arch_kernel`), and a cubin's `e_flags`.
The fatbin layout is in `probe/_fatbin.py`. A model `.so` that embeds a gigabyte of weights costs
the same few reads as a small one.
"""

from __future__ import annotations

import re
import struct
from typing import IO, Dict, List, Tuple

from inductor_doctor.core.artifact_facts import SharedObject, version_key
from inductor_doctor.probe._elf import TORCH_SYMBOL, max_version
from inductor_doctor.probe._fatbin import FATBIN_MAGIC, cubin_arch, fatbin_archs

EM_CUDA = 190
#: The symbols AOTInductor puts around each kernel binary it embeds (`cpp_builder.convert_cubin_to_obj`).
_KERNEL_START, _KERNEL_END = "_start", "_end"
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

    stream.seek(0)
    if stream.read(4) == struct.pack("<I", FATBIN_MAGIC):  # a fatbin file of its own
        obj.kind = "fatbin"
        stream.seek(0, 2)
        size = stream.tell()
        stream.seek(0)
        obj.cuda_archs, obj.ptx_archs = fatbin_archs(stream, size)
        return
    stream.seek(0)
    elf = ELFFile(stream)
    if elf["e_machine"] in ("EM_CUDA", EM_CUDA):
        obj.kind = "cubin"
        arch = cubin_arch(elf["e_flags"], elf["e_ident"]["EI_ABIVERSION"])
        if arch:
            obj.cuda_archs = [arch]
        return
    needs: List[str] = []
    cubins: List[str] = []
    ptx: List[str] = []
    bounds: Dict[str, Dict[str, Tuple[int, int]]] = {}  # kernel -> {"_start": (section, value), ...}
    for sec in elf.iter_sections():
        if isinstance(sec, GNUVerNeedSection):
            for _, auxs in sec.iter_versions():
                needs.extend(aux.name for aux in auxs)
        elif isinstance(sec, DynamicSection):
            obj.needed = [t.needed for t in sec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        elif isinstance(sec, SymbolTableSection) and sec.name in (".dynsym", ".symtab"):
            if sec.name == ".symtab" and not _names_kernels(sec.stringtable):
                continue  # a full symbol table is long: read it only when it names embedded kernels
            undefined = set()
            for sym in sec.iter_symbols():
                name, where = sym.name, sym["st_shndx"]
                if not name:
                    continue
                if where == "SHN_UNDEF":
                    if sec.name == ".dynsym" and TORCH_SYMBOL.match(name):
                        undefined.add(name)
                elif name.startswith("__") and isinstance(where, int):
                    for end in (_KERNEL_START, _KERNEL_END):
                        if name.endswith(end) and len(name) > 2 + len(end):
                            bounds.setdefault(name[2 : -len(end)], {})[end] = (where, sym["st_value"])
            if sec.name == ".dynsym":
                obj.torch_symbols = sorted(undefined)
        elif sec.name == ".comment":
            texts = [t.decode("utf-8", "replace") for t in sec.data().split(b"\x00") if t.strip()]
            obj.compiler = texts[-1] if texts else None
        elif sec.name == ".debug_str" and sec["sh_size"] <= MAX_DEBUG_STR:
            _producer(sec.data(), obj)
        elif sec.name == ".nv_fatbin" and sec["sh_type"] != "SHT_NOBITS":
            stream.seek(sec["sh_offset"])
            found = fatbin_archs(stream, sec["sh_size"])
            cubins += found[0]
            ptx += found[1]
    for kernel in _embedded_kernels(elf, stream, bounds):
        cubins += kernel[0]
        ptx += kernel[1]
    obj.cuda_archs, obj.ptx_archs = _sorted(cubins), _sorted(ptx)
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


_BOUND = re.compile(rb"\x00__(\w+?)_(start|end)(?=\x00)")


def _names_kernels(strings: object) -> bool:
    """Whether a string table holds both `__<name>_start` and `__<name>_end` for some name: a
    regular expression over its bytes, where walking every symbol would cost far more."""
    if strings is None or strings["sh_type"] == "SHT_NOBITS":  # type: ignore[index]
        return False
    found: Dict[bytes, set] = {}
    for m in _BOUND.finditer(strings.data()):  # type: ignore[attr-defined]
        found.setdefault(m.group(1), set()).add(m.group(2))
    return any(len(ends) == 2 for ends in found.values())


def _sorted(archs: List[str]) -> List[str]:
    return sorted(set(archs), key=lambda a: (version_key(a), a))


def _embedded_kernels(
    elf: object, stream: IO[bytes], bounds: Dict[str, Dict[str, Tuple[int, int]]]
) -> List[Tuple[List[str], List[str]]]:
    """The architectures of each kernel binary embedded between `__<kernel>_start` and
    `__<kernel>_end`: a fatbin (its entries' headers) or a cubin (its `e_flags`). Only the first 64
    bytes of each are read unless it is a fatbin; anything else there is not device code."""
    out = []
    seen = set()
    for marks in bounds.values():
        if _KERNEL_START not in marks or _KERNEL_END not in marks:
            continue
        (shndx, start), (end_shndx, end) = marks[_KERNEL_START], marks[_KERNEL_END]
        if shndx != end_shndx or end <= start or start in seen:
            continue
        seen.add(start)
        sec = elf.get_section(shndx)  # type: ignore[attr-defined]
        if sec["sh_type"] == "SHT_NOBITS" or not sec["sh_addr"] <= start < sec["sh_addr"] + sec["sh_size"]:
            continue
        offset = sec["sh_offset"] + start - sec["sh_addr"]
        stream.seek(offset)
        head = stream.read(64)
        if head[:4] == struct.pack("<I", FATBIN_MAGIC):
            stream.seek(offset)
            out.append(fatbin_archs(stream, end - start))
        elif len(head) == 64 and head[:4] == b"\x7fELF" and struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
            arch = cubin_arch(struct.unpack_from("<I", head, 48)[0], head[8])
            out.append(([arch] if arch else [], []))
    return out
