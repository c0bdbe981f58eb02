"""The portable blob of `torch.compiler.save_cache_artifacts()` ("Mega-Cache"), read without torch.

Its layout (torch/utils/_appending_byte_serializer.py, torch/compiler/_cache.py): from torch 2.8 a
CRC32 of the rest (4 bytes), in torch 2.7 nothing; then the encoding version (uint64, big-endian, 1),
then per cache kind its name (base64, length-prefixed), a count, and per entry its key (base64) and
content (bytes); torch 2.7 writes each entry alone, its kind a number (`CacheArtifactType`: 0
inductor, 1 autotune, 2 aot_autograd, 3 pgo), its key plain. Neither torch reads the other's
layout (2.7 fails its version assertion on a checksum, 2.8+ its checksum on a version):
`load_cache_artifacts` warns and returns None. The entries are pickles written by the torch that
compiled them; they are never unpickled here. What built them is read from the text they carry: the
repro header of the runnable graph ("# torch version: 2.13.0+cpu", "# torch cuda version: ...",
"# torch git version: <hash>"), and a Triton kernel's source for its version.
"""

from __future__ import annotations

import base64
import re
import zlib
from typing import Dict, List, Optional, Tuple

from inductor_doctor.core.artifact_facts import ArtifactFacts

ENCODING_VERSION = 1
#: torch 2.7's CacheArtifactType, by value.
KINDS_27 = {0: "inductor", 1: "autotune", 2: "aot_autograd", 3: "pgo"}
_TORCH = re.compile(rb"# torch version: ([^\s\\]+)")
_TORCH_CUDA = re.compile(rb"# torch cuda version: ([^\s\\]+)")
_TORCH_GIT = re.compile(rb"# torch git version: ([0-9a-f]{7,40})")
_TRITON = re.compile(rb"triton[_ ]version[\"']?\s*[:=]\s*[\"']?([0-9][\w.+]*)")
#: An FX graph entry pickles its `device_types` (an OrderedSet of "cpu", "cuda", ...) right after the key.
_DEVICE_TYPES = b"device_types"
_DEVICE_NAMES = re.compile(rb"\x8c\x04(cuda)|\x8c\x03(cpu)|\x8c\x03(xpu)|\x8c\x03(mps)")


class BlobError(ValueError):
    pass


def entries(data: bytes) -> List[Tuple[str, str, bytes]]:
    """(kind, key, content) of every entry; raises BlobError when it is not such a blob."""
    if len(data) < 12:
        raise BlobError("too short to be a cache blob")
    before_checksum = int.from_bytes(data[:8], "big") == ENCODING_VERSION  # torch 2.7's layout
    if before_checksum:
        pos = 0
    elif zlib.crc32(data[4:]).to_bytes(4, "big") != data[:4]:
        raise BlobError("its checksum does not match: not a save_cache_artifacts() blob, or damaged")
    else:
        pos = 4

    def u64() -> int:
        nonlocal pos
        if pos + 8 > len(data):
            raise BlobError("truncated")
        v = int.from_bytes(data[pos : pos + 8], "big")
        pos += 8
        return v

    def raw() -> bytes:
        nonlocal pos
        n = u64()
        if pos + n > len(data):
            raise BlobError("truncated")
        v = data[pos : pos + n]
        pos += n
        return v

    version = u64()
    if version != ENCODING_VERSION:
        raise BlobError(f"encoding version {version} (this reader knows {ENCODING_VERSION})")
    out = []
    while before_checksum and pos < len(data):
        kind = KINDS_27.get(u64(), "unknown")
        key = raw().decode("utf-8", "replace")
        out.append((kind, key, raw()))
    while pos < len(data):
        kind = base64.b64decode(raw()).decode("utf-8", "replace")
        for _ in range(u64()):
            key = base64.b64decode(raw()).decode("utf-8", "replace")
            out.append((kind, key, raw()))
    return out


#: The repro header's environment block (torch/_dynamo/debug_utils.py:generate_env_vars_string): every
#: variable of the compiling process whose name holds TORCH, DYNAMO, INDUCTOR or TRITON.
_ENV_LINE = re.compile(rb"^os\.environ\['([A-Z][A-Z0-9_]*)'\] = '([^'\n]*)'$", re.MULTILINE)
_ENV_BLOCK_END = b"os.environ.pop('TORCHDYNAMO_REPRO_AFTER', None)"


def compile_env(data: bytes) -> Optional[Dict[str, str]]:
    """The variables an entry's repro header says its compiling process had set, or None where it has
    no such block. Names that look like secrets are dropped and URLs lose their passwords, as the
    probe's own environment does (core/envvars.py)."""
    end = data.find(_ENV_BLOCK_END)
    if end < 0:
        return None
    start = data.rfind(b"import os\n", 0, end)
    block = data[start if start >= 0 else max(0, end - 20000):end]
    from inductor_doctor.core.envvars import relevant, without_password

    out: Dict[str, str] = {}
    for m in _ENV_LINE.finditer(block):
        name = m.group(1).decode("ascii")
        if relevant(name):
            out[name] = without_password(m.group(2).decode("utf-8", "replace"))
    return out


def first(pattern: re.Pattern[bytes], data: bytes) -> Optional[str]:
    m = pattern.search(data)
    return m.group(1).decode("utf-8", "replace") if m else None


def read_blob(path: str, facts: ArtifactFacts) -> None:
    with open(path, "rb") as f:
        data = f.read()
    try:
        found = entries(data)
    except BlobError as exc:
        facts.error = f"not a readable torch.compiler.save_cache_artifacts() blob: {exc}"
        return
    counts: Dict[str, int] = {}
    devices = set()
    for kind, _key, content in found:
        counts[kind] = counts.get(kind, 0) + 1
        for name, pattern in (
            ("torch_version", _TORCH),
            ("torch_git", _TORCH_GIT),
            ("triton_version", _TRITON),
        ):
            if getattr(facts, name) is None:
                value = first(pattern, content)
                if value:
                    setattr(facts, name, value)
                    facts.sources[name] = f"its {kind} entry's repro header"
        at = content.find(_DEVICE_TYPES)
        if at >= 0:
            for m in _DEVICE_NAMES.finditer(content, at, at + 200):
                devices.update(g.decode() for g in m.groups() if g)
        cuda = first(_TORCH_CUDA, content)
        if cuda and cuda != "None":
            facts.metadata["torch_cuda"] = cuda
        if facts.compile_env is None:
            env = compile_env(content)
            if env is not None:
                facts.compile_env = env
                facts.sources["compile_env"] = f"its {kind} entry's repro header"
    facts.entries = counts
    if int.from_bytes(data[:8], "big") == ENCODING_VERSION:
        facts.metadata["blob_layout"] = "2.7"
        facts.sources["blob_layout"] = "its layout: torch 2.7's, before the checksum torch 2.8 added"
    facts.device = (
        "cuda" if "cuda" in devices else "xpu" if "xpu" in devices else ("cpu" if devices or found else None)
    )
    if not found:
        facts.notes.append("the blob holds no cache entry")
