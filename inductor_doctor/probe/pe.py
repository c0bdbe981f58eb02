"""Two facts a Windows DLL carries, read from its bytes on any platform: the MSVC linker that built it
and its own file version.

The PE optional header holds the linker's version (`MajorLinkerVersion`, `MinorLinkerVersion`: 14.44 for
Visual Studio 2022 17.14's toolset, whose `msvcp140.dll` is 14.44.x); a DLL's version resource holds
`VS_FIXEDFILEINFO`, whose `dwFileVersionMS/LS` are the "14.29.30133.0" Windows shows. Neither needs
Windows, the DLL loaded, or anything run.
"""

from __future__ import annotations

import struct
from typing import Optional, Tuple

#: VS_FIXEDFILEINFO.dwSignature, little-endian.
_FIXED = struct.pack("<I", 0xFEEF04BD)
#: How much of a file is read at most: a runtime DLL is under 1 MiB, torch's c10.dll a few.
MAX_READ = 64 << 20


def _read(path: str, size: int = MAX_READ) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return None


def linker_version(path: str) -> Optional[Tuple[int, int]]:
    """(14, 44) for a DLL linked by MSVC 14.44; None for a file that is not PE."""
    head = _read(path, 4096)
    if not head or head[:2] != b"MZ" or len(head) < 0x40:
        return None
    (pe,) = struct.unpack_from("<I", head, 0x3C)
    if pe + 24 + 4 > len(head) or head[pe:pe + 4] != b"PE\0\0":
        return None
    optional = pe + 24  # the 4-byte signature and the 20-byte COFF header
    magic, major, minor = struct.unpack_from("<HBB", head, optional)
    if magic not in (0x10B, 0x20B):
        return None
    return major, minor


def file_version(path: str) -> Optional[str]:
    """The version resource's file version, "14.29.30133.0"; None without one."""
    data = _read(path)
    if not data or data[:2] != b"MZ":
        return None
    at = data.find(_FIXED)
    while at >= 0 and at + 16 <= len(data):
        _sig, struct_version, ms, ls = struct.unpack_from("<IIII", data, at)
        if struct_version in (0x10000, 0):  # VS_FFI_STRUCVERSION
            return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"
        at = data.find(_FIXED, at + 4)
    return None
