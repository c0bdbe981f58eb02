"""ELF reading with pyelftools: symbol lookups through the dynamic hash table, notes, versions.

libtorch_cpu.so is about 400 MB with ~300k dynamic symbols; scanning them in Python takes seconds.
The loader itself never scans: it hashes the name and walks one bucket of `.gnu.hash` (or the
SysV `.hash`). We do the same, so a lookup costs about a millisecond. Everything here returns
None/empty for a file that is missing or not ELF: the callers turn that into a note.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Iterator, List, Optional, Tuple

from elftools.common.exceptions import ELFError

if TYPE_CHECKING:  # pragma: no cover - typing only; pyelftools' ELF parts load on first use (~30 ms)
    from elftools.elf.elffile import ELFFile

ELF_ERRORS = (OSError, ELFError, ValueError, KeyError, AttributeError, TypeError, IndexError)


@contextmanager
def open_elf(path: str) -> Iterator[ELFFile]:
    """An ELFFile over an open file; raises OSError/ELFError like `open` and pyelftools do."""
    from elftools.elf.elffile import ELFFile

    stream: IO[bytes] = open(path, "rb")
    try:
        yield ELFFile(stream)
    finally:
        stream.close()


class SymbolIndex:
    """Name → defined dynamic symbol, through the file's own hash table (never a full scan)."""

    def __init__(self, elf: ELFFile) -> None:
        from elftools.elf.dynamic import DynamicSegment
        from elftools.elf.hash import ELFHashSection, ELFHashTable, GNUHashSection, GNUHashTable

        self._tables: List[object] = []
        for sec in elf.iter_sections():
            if isinstance(sec, (GNUHashSection, ELFHashSection)):
                self._tables.append(sec)
        if not self._tables:  # section headers stripped: the dynamic segment still has them
            for seg in elf.iter_segments():
                if isinstance(seg, DynamicSegment):
                    _, gnu = seg.get_table_offset("DT_GNU_HASH")
                    if gnu is not None:
                        self._tables.append(GNUHashTable(elf, gnu, seg))
                    _, sysv = seg.get_table_offset("DT_HASH")
                    if sysv is not None:
                        self._tables.append(ELFHashTable(elf, sysv, None, seg))
        # .gnu.hash first: it has a bloom filter and holds only defined symbols.
        self._tables.sort(key=lambda t: 0 if isinstance(t, GNUHashTable) else 1)

    @property
    def usable(self) -> bool:
        return bool(self._tables)

    def defines(self, name: str) -> bool:
        """Whether the library exports a definition of `name` (an undefined import does not count)."""
        for table in self._tables:
            sym = table.get_symbol(name)  # type: ignore[attr-defined]
            if sym is not None and sym["st_shndx"] != "SHN_UNDEF":
                return True
        return False


def section_data(path: str, name: str) -> Optional[bytes]:
    """One section's bytes, read with `struct` from the section headers: pyelftools' name lookup
    parses every section first (the 400 MB libtorch_cpu.so's `.gnu.hash` included, ~40 ms), this
    reads three small tables. None for a file that is not ELF or has no such section."""
    import struct

    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
            return None
        wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
        (shoff,) = struct.unpack_from(end + ("Q" if wide else "I"), head, 0x28 if wide else 0x20)
        entsize, count, strndx = struct.unpack_from(end + "HHH", head, 0x3A if wide else 0x2E)
        if not shoff or not count or strndx >= count:  # no headers, or >= 0xff00 sections (escaped)
            return None
        f.seek(shoff)
        table = f.read(entsize * count)
        layout = end + ("IIQQQQ" if wide else "IIIIII")

        def header(i: int) -> Tuple[int, int, int]:
            name_at, _type, _flags, _addr, offset, size = struct.unpack_from(layout, table, i * entsize)
            return name_at, offset, size

        _, str_at, str_size = header(strndx)
        f.seek(str_at)
        names = f.read(str_size)
        wanted = name.encode() + b"\0"
        for i in range(count):
            name_at, offset, size = header(i)
            if names[name_at:name_at + len(wanted)] == wanted:
                f.seek(offset)
                return f.read(size)
    return None


def comment_strings(path: str) -> List[str]:
    """The `.comment` section: one string per toolchain that contributed objects (GCC, clang, ...)."""
    data = section_data(path, ".comment") or b""
    return [s.decode("utf-8", "replace").strip() for s in data.split(b"\0") if s.strip()]


_GCC = re.compile(r"GCC: \([^)]*\) (\d+(?:\.\d+)*)")
_CLANG = re.compile(r"clang version (\d+(?:\.\d+)*)")


def built_with(comments: List[str]) -> Optional[str]:
    """The compiler that built the library: the first GCC or clang `.comment` entry.

    A library's `.comment` also lists the toolchains of static objects linked in (crt files, oneDNN
    built with icx, ...); the linker merges them in link order, and the main compiler's objects come
    first in torch's wheels. The others stay visible in the notes.
    """
    for s in comments:
        m = _GCC.search(s)
        if m:
            return f"GCC {m.group(1)}"
        m = _CLANG.search(s)
        if m:
            return f"{'Apple ' if 'Apple' in s else ''}clang {m.group(1)}"
    return comments[0] if comments else None


def version_definitions(elf: ELFFile) -> List[str]:
    """The symbol versions a library defines (`GLIBCXX_3.4.30`, `CXXABI_1.3.13`, ...)."""
    from elftools.elf.gnuversions import GNUVerDefSection

    out: List[str] = []
    for sec in elf.iter_sections():
        if isinstance(sec, GNUVerDefSection):
            for _verdef, auxiter in sec.iter_versions():
                for aux in auxiter:
                    out.append(aux.name)
                    break  # the first aux entry names the version; the rest are its parents
    return out


def max_version(names: List[str], prefix: str) -> Optional[str]:
    """The highest `PREFIX_x.y.z` among `names`, as `x.y.z`."""
    best: Optional[Tuple[int, ...]] = None
    for n in names:
        if not n.startswith(prefix + "_"):
            continue
        parts = n[len(prefix) + 1 :].split(".")
        if not all(p.isdigit() for p in parts):
            continue
        v = tuple(int(p) for p in parts)
        if best is None or v > best:
            best = v
    return ".".join(str(p) for p in best) if best else None


def undefined_symbols(path: str) -> List[str]:
    """The undefined symbols an object file references (its `.symtab`, or `.dynsym` for a .so)."""
    out: List[str] = []
    with open_elf(path) as elf:
        sec = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        if sec is None:
            return out
        for sym in sec.iter_symbols():  # an object from a one-line TU: a handful of symbols
            if sym.name and sym["st_shndx"] == "SHN_UNDEF":
                out.append(sym.name)
    return out


#: Undefined symbols that torch's libraries (libtorch_cpu, libc10, libtorch_python, ...) must
#: provide: AOTInductor's and the stable ABI's C shim (`aoti_torch_*`) and C++ symbols in torch's
#: namespaces (`c10::`, `at::`, `torch::`, `caffe2::`).
TORCH_SYMBOL = re.compile(r"^(aoti_|_Z[A-Z]*N?[KVRO]*(3c10|2at|5torch|6caffe2)\d)")

_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 10, 15, 29
_PT_LOAD, _PT_DYNAMIC = 1, 2


def dynamic_entries(path: str) -> Optional[Tuple[List[str], List[str]]]:
    """(DT_NEEDED, the RPATH and RUNPATH directories) of a shared object, read with `struct` from its
    program headers: a few small reads, where pyelftools would parse every section header. None for
    a file that is not a readable ELF shared object."""
    import struct

    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
            return None
        wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
        word = "Q" if wide else "I"
        (phoff,) = struct.unpack_from(end + word, head, 0x20 if wide else 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", head, 0x36 if wide else 0x2A)
        if not phoff or not phnum:
            return None
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        loads: List[Tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        dynamic: Optional[Tuple[int, int]] = None
        for i in range(phnum):
            if wide:
                ptype, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from(end + "IIQQQQ", table,
                                                                                 i * phentsize)
            else:
                ptype, offset, vaddr, _paddr, filesz = struct.unpack_from(end + "IIIII", table, i * phentsize)
            if ptype == _PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif ptype == _PT_DYNAMIC:
                dynamic = (offset, filesz)
        if dynamic is None:
            return None
        f.seek(dynamic[0])
        raw = f.read(dynamic[1])
        entry = struct.Struct(end + ("qQ" if wide else "iI"))
        tags: List[Tuple[int, int]] = []
        for off in range(0, len(raw) - entry.size + 1, entry.size):
            tag, value = entry.unpack_from(raw, off)
            if tag == _DT_NULL:
                break
            tags.append((tag, value))
        strtab = next((v for t, v in tags if t == _DT_STRTAB), None)
        strsz = next((v for t, v in tags if t == _DT_STRSZ), None)
        if strtab is None or not strsz:
            return None
        at = next((off + strtab - va for va, off, size in loads if va <= strtab < va + size), None)
        if at is None:
            return None
        f.seek(at)
        strings = f.read(strsz)

    def text(offset: int) -> str:
        stop = strings.find(b"\0", offset)
        return strings[offset : stop if stop >= 0 else len(strings)].decode("utf-8", "replace")

    needed = [text(v) for t, v in tags if t == _DT_NEEDED]
    paths = [p for t, v in tags if t in (_DT_RPATH, _DT_RUNPATH) for p in text(v).split(":") if p]
    return needed, paths


def undefined_dynamic(elf: ELFFile, wanted: re.Pattern[str]) -> List[str]:
    """The undefined, non-weak dynamic symbols whose names match `wanted`: what the loader must find
    in another library, or refuse the load."""
    from elftools.elf.sections import SymbolTableSection

    sec = elf.get_section_by_name(".dynsym")
    if not isinstance(sec, SymbolTableSection):
        return []
    out = set()
    for sym in sec.iter_symbols():
        if sym["st_shndx"] == "SHN_UNDEF" and sym["st_info"]["bind"] != "STB_WEAK" and sym.name \
                and wanted.match(sym.name):
            out.add(sym.name)
    return sorted(out)
