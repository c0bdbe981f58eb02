"""An AOTInductor package (`.pt2`, a zip): its metadata and its `.so` files, cubins and fatbins, in
place (a package built with `aot_inductor.emit_multi_arch_kernel` holds one `.fatbin` per kernel
where the default holds a `.cubin`).

`aoti_compile_and_package` stores its members uncompressed, so each `.so` is read where it lies in
the zip (an offset and a length): pyelftools seeks within that window and reads only the headers
and the few sections `artifact/elf.py` wants, however many weights the `.so` embeds.
"""

from __future__ import annotations

import json
import struct
import zipfile
from typing import IO, Optional

from inductor_doctor.artifact.elf import read_object
from inductor_doctor.core.artifact_facts import ArtifactFacts

#: A deflated member is read into memory only up to this size (AOTInductor never deflates).
MAX_INFLATE = 256 * 1024 * 1024


class Window:
    """A read-only file over `length` bytes of `stream` from `offset`: a stored zip member."""

    def __init__(self, stream: IO[bytes], offset: int, length: int) -> None:
        self._s, self._off, self._len, self._pos = stream, offset, length, 0

    def seek(self, pos: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._len}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        left = self._len - self._pos
        n = left if n is None or n < 0 else min(n, left)
        if n <= 0:
            return b""
        self._s.seek(self._off + self._pos)
        data = self._s.read(n)
        self._pos += len(data)
        return data


def member_window(zf: zipfile.ZipFile, stream: IO[bytes], info: zipfile.ZipInfo) -> Optional[Window]:
    """Where a stored member's bytes are: its local header says how long its name and extra are."""
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    stream.seek(info.header_offset)
    head = stream.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return None
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    return Window(stream, info.header_offset + 30 + name_len + extra_len, info.file_size)


def read_pt2(path: str, facts: ArtifactFacts) -> None:
    import io

    with open(path, "rb") as stream:
        try:
            zf = zipfile.ZipFile(stream)
        except zipfile.BadZipFile as exc:
            facts.error = f"not a .pt2 package (a zip): {exc}"
            return
        with zf:
            for info in zf.infolist():
                name = info.filename
                parts = name.split("/")
                leaf = parts[-1]
                if leaf == "archive_version":
                    facts.archive_version = zf.read(info).decode("utf-8", "replace").strip()
                elif name.endswith("_metadata.json") and "/aotinductor/" in name:
                    try:
                        meta = json.loads(zf.read(info) or b"{}")
                    except ValueError:
                        facts.notes.append(f"{name}: not JSON")
                        continue
                    facts.metadata.update({str(k): str(v) for k, v in meta.items()})
                    model = parts[parts.index("aotinductor") + 1] if "aotinductor" in parts[:-1] else ""
                    if model and model not in facts.models:
                        facts.models.append(model)
                elif "sample_inputs" in parts[:-1] or leaf.startswith("sample_inputs"):
                    facts.example_inputs = True
                elif leaf.endswith((".so", ".cubin", ".fatbin", ".hsaco")):
                    window = member_window(zf, stream, info)
                    if window is None:
                        if info.file_size > MAX_INFLATE:
                            facts.notes.append(f"{name}: compressed and too large to read")
                            continue
                        window = io.BytesIO(zf.read(info))  # type: ignore[assignment]
                    facts.objects.append(read_object(window, name, info.file_size))  # type: ignore[arg-type]
    meta = facts.metadata
    facts.device = meta.get("AOTI_DEVICE_KEY") or facts.device
    facts.cpu_isa = meta.get("AOTI_CPU_ISA") or None
    facts.compute_capability = meta.get("AOTI_COMPUTE_CAPABILITY") or None
    facts.platform = meta.get("AOTI_PLATFORM") or None
    facts.machine = meta.get("AOTI_MACHINE") or None
    for key, what in (
        ("cpu_isa", "AOTI_CPU_ISA"),
        ("compute_capability", "AOTI_COMPUTE_CAPABILITY"),
        ("device", "AOTI_DEVICE_KEY"),
    ):
        if getattr(facts, key):
            facts.sources[key] = f"the package's {what}"
    if not facts.objects and not facts.error:
        facts.notes.append("the package holds no compiled model (.so): nothing of it is native code")
