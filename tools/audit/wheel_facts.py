"""What a torch wheel is built for, read from the wheel: its CUDA, its GPU architectures, its tags.

* The build and the CUDA runtime come from METADATA: a CUDA wheel on PyPI requires NVIDIA's
  runtime (`nvidia-cuda-runtime-cu12==12.8.90`, or `cuda-toolkit[cudart,...]==13.0.3` from
  torch 2.13); a wheel that requires none is CPU-only.
* The architectures are the string `torch.cuda.get_arch_list()` returns, compiled into
  libtorch_python.so (`sm_75 sm_80 ... sm_120`, `compute_XX` for PTX): the member is deflated, so
  it is decompressed as it streams in (about 10 MB of a 500 MB wheel). The kernels themselves
  confirm it: the first fat binaries of libtorch_cuda.so's `.nv_fatbin` name the architecture of
  each cubin and PTX entry; they start some 70 MB into the library, which is streamed up to there
  and no further (about 18 MB fetched).
* The CPython tags and the manylinux tag (the glibc floor it claims) come from the file names.
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
import zlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

from packaging.markers import Marker, UndefinedEnvironmentName
from packaging.utils import parse_wheel_filename

from audit import remote

#: Bump when what `platform_facts` records changes, so that cached answers are redone.
VERSION = 2
FATBIN_MAGIC = 0xBA55ED50
FATBIN_SAMPLE = 4  # containers read from the start of .nv_fatbin
CHUNK = 4 << 20
_ARCH_STRING = re.compile(rb"((?:sm|compute)_\d{2,3}[af]?(?: (?:sm|compute)_\d{2,3}[af]?)+)\x00")
#: The CUDA runtime a wheel requires: `nvidia-cuda-runtime-cu12==12.8.90` (to torch 2.12), or NVIDIA's
#: `cuda-toolkit[cudart,...]==13.0.3` metapackage (torch 2.13 on).
_RUNTIME = re.compile(r"^(?:nvidia-cuda-runtime(?:-cu\d+)?|cuda-toolkit\[[^\]]*\bcudart\b[^\]]*\])"
                      r"\s*(?:\(\s*)?(?:==|~=|>=)\s*(?P<v>\d+\.\d+)", re.IGNORECASE)
_CUDA_PKG = re.compile(r"^(?:nvidia-(?:cuda-|cublas|cudnn)|cuda-toolkit\b)", re.IGNORECASE)
#: manylinux tags and the glibc they promise (PEP 513, 571, 599, 600).
_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


class Unreadable(Exception):
    """A wheel's file no longer has the shape the audit knows."""


def build_from_metadata(meta: str, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """`{"build": "cuda", "cuda": "12.8", "runtime": "nvidia-cuda-runtime-cu12==12.8.90"}`, or cpu.

    A requirement whose marker excludes the platform (`platform_machine == "x86_64"` read on an
    aarch64 wheel) is not one: `env` is the platform's marker environment."""
    runtime = None
    gpu_deps = False
    for line in meta.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key != "Requires-Dist":
            continue
        req, _, marker = value.partition(";")
        req = req.strip()
        if marker.strip() and env is not None:
            try:
                if not Marker(marker.strip()).evaluate(env):
                    continue
            except UndefinedEnvironmentName:
                continue  # `extra == ...`: an optional dependency
        if _CUDA_PKG.match(req):
            gpu_deps = True
        m = _RUNTIME.match(req)
        if m and runtime is None:
            runtime = (req, m.group("v"))
    if runtime:
        return {"build": "cuda", "cuda": runtime[1], "runtime": runtime[0]}
    if gpu_deps:
        raise Unreadable("METADATA requires NVIDIA packages but no nvidia-cuda-runtime the audit can read")
    return {"build": "cpu", "cuda": None, "runtime": None}


def manylinux_glibc(filename: str) -> Tuple[Optional[str], Optional[str]]:
    """(the wheel's manylinux tag, the glibc it claims); (None, None) for other platforms."""
    _, _, _, tags = parse_wheel_filename(filename)
    floors = []
    for t in tags:
        m = re.match(r"manylinux_(\d+)_(\d+)_", t.platform)
        if m:
            floors.append((int(m.group(1)), int(m.group(2)), t.platform))
        for legacy, glibc in _LEGACY.items():
            if t.platform.startswith(legacy + "_"):
                major, minor = glibc.split(".")
                floors.append((int(major), int(minor), legacy))
    if not floors:
        return None, None
    major, minor, tag = min(floors)
    return (tag if not tag.startswith("manylinux_") else f"manylinux_{major}_{minor}"), f"{major}.{minor}"


def stream(wheel: remote.Wheel, name: str) -> Iterator[bytes]:
    """The decompressed bytes of one deflated member, as they arrive; stop reading to stop fetching."""
    zf = wheel._open()
    info = zf.getinfo(name)
    raw: remote.RangeFile = zf.fp  # type: ignore[assignment]
    raw.seek(info.header_offset)
    header = raw.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    pos = info.header_offset + 30 + name_len + extra_len
    end = pos + info.compress_size
    if info.compress_type == zipfile.ZIP_STORED:
        while pos < end:
            raw.seek(pos)
            chunk = raw.read(min(CHUNK, end - pos))
            pos += len(chunk)
            yield chunk
        return
    if info.compress_type != zipfile.ZIP_DEFLATED:
        raise Unreadable(f"{name} is compressed with method {info.compress_type}")
    inflate = zlib.decompressobj(-15)
    while pos < end:
        raw.seek(pos)
        chunk = raw.read(min(CHUNK, end - pos))
        pos += len(chunk)
        out = inflate.decompress(chunk)
        if out:
            yield out


def fetched(wheel: remote.Wheel) -> int:
    return wheel._open().fp.fetched  # type: ignore[union-attr]


def arch_flags(wheel: remote.Wheel) -> Optional[List[str]]:
    """`torch.cuda.get_arch_list()` as built: the longest arch string in libtorch_python.so."""
    name = "torch/lib/libtorch_python.so"
    if name not in wheel.names():
        return None
    best = b""
    tail = b""
    for chunk in stream(wheel, name):
        buf = tail + chunk
        for m in _ARCH_STRING.finditer(buf):
            if m.group(1).count(b" ") > best.count(b" "):
                best = m.group(1)
        tail = buf[-256:]
    return best.decode().split() if best else None


def fatbin_archs(wheel: remote.Wheel, sample: int = FATBIN_SAMPLE) -> Optional[List[str]]:
    """`sm_XX` per cubin and `compute_XX` per PTX entry of the first fat binaries in libtorch_cuda.so."""
    name = "torch/lib/libtorch_cuda.so"
    if name not in wheel.names():
        return None
    buf = bytearray()
    base = 0  # file offset of buf[0]
    start: Optional[int] = None
    found: List[str] = []
    containers = 0
    magic = struct.pack("<I", FATBIN_MAGIC)
    for chunk in stream(wheel, name):
        buf += chunk
        if start is None:
            i = -1
            while True:  # the first magic that begins a well-formed container (version 1, 16-byte header)
                i = buf.find(magic, i + 1)
                if i < 0 or i + 16 > len(buf):
                    break
                _, version, header, _ = struct.unpack_from("<IHHQ", buf, i)
                if version == 1 and header == 16 and (base + i) % 8 == 0:
                    start = base + i
                    break
            if start is None:
                keep = buf[-16:]
                base += len(buf) - len(keep)
                buf = bytearray(keep)
                continue
        pos = start - base
        while containers < sample and pos + 16 <= len(buf):
            m, _, header, fat_size = struct.unpack_from("<IHHQ", buf, pos)
            if m != FATBIN_MAGIC:
                containers = sample
                break
            if pos + header + fat_size > len(buf):
                break  # read more
            entry, end = pos + header, pos + header + fat_size
            while entry + 32 <= end:
                kind, _ev, eh_size, payload = struct.unpack_from("<HHIQ", buf, entry)
                arch = struct.unpack_from("<I", buf, entry + 28)[0]
                if eh_size == 0:
                    break
                tag = {1: "compute", 2: "sm"}.get(kind)
                if tag and 10 <= arch <= 999 and f"{tag}_{arch}" not in found:
                    found.append(f"{tag}_{arch}")
                entry += eh_size + payload
            pos = (end + 7) // 8 * 8
            start = base + pos
            containers += 1
        if containers >= sample:
            break
    if not found:
        return None
    return sorted(found, key=lambda t: (int(t.split("_")[1]), t.startswith("compute")))


#: The platforms whose PyPI wheels are read: the key in the snapshot, and how a wheel's tag ends.
PLATFORMS = {"linux_x86_64": ("linux", "x86_64"), "linux_aarch64": ("linux", "aarch64"),
             "win_amd64": ("win", "amd64")}
#: Their marker environments (PEP 508), for the requirements of a wheel's METADATA.
MARKERS = {
    "linux_x86_64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64"},
    "linux_aarch64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "aarch64"},
    "win_amd64": {"platform_system": "Windows", "sys_platform": "win32", "platform_machine": "AMD64"},
}


def marker_env(key: str) -> Dict[str, str]:
    env = {"os_name": "posix", "python_version": "3.12", "python_full_version": "3.12.0",
           "implementation_name": "cpython", "platform_python_implementation": "CPython",
           "platform_release": "", "platform_version": "", "implementation_version": "3.12.0"}
    env.update(MARKERS[key])
    if key.startswith("win"):
        env["os_name"] = "nt"
    return env


def platform_wheels(index: Dict[str, Any], version: str, key: str) -> List[Tuple[Any, Dict[str, Any]]]:
    """(tags, file) of every wheel of `version` for the platform `key`."""
    system, machine = PLATFORMS[key]
    out = []
    for f in index["files"]:
        if f.get("yanked") or not f["filename"].endswith(".whl"):
            continue
        _, ver, _, tags = parse_wheel_filename(f["filename"])
        if str(ver) == version and any(system in t.platform and t.platform.endswith(machine)
                                       for t in tags):
            out.append((tags, f))
    return out


def pythons_of(wheels: List[Tuple[Any, Dict[str, Any]]]) -> List[str]:
    seen = set()
    for tags, _ in wheels:
        for t in tags:
            if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit():
                d = t.interpreter[2:]
                seen.add(f"{d[0]}.{d[1:]}" + ("t" if t.abi.endswith("t") else ""))
    return sorted(seen, key=lambda s: (tuple(int(x) for x in s.rstrip("t").split(".")), s.endswith("t")))


def pick(wheels: List[Tuple[Any, Dict[str, Any]]]) -> Dict[str, Any]:
    """The CPython 3.12 wheel (else the newest GIL one): what the audit reads for the platform."""
    def rank(item: Tuple[Any, Dict[str, Any]]) -> Tuple[int, str]:
        tags, f = item
        interps = {t.interpreter for t in tags if not t.abi.endswith("t")}
        return (1 if "cp312" in interps else 0, f["filename"])
    return max(wheels, key=rank)[1]


def platform_facts(index: Dict[str, Any], version: str, key: str, kernels: bool) -> Optional[Dict[str, Any]]:
    """What PyPI's wheel of torch `version` for platform `key` is built for, each fact with its source;
    None when PyPI has no wheel for that platform. `kernels`: also read the GPU architectures."""
    wheels = platform_wheels(index, version, key)
    if not wheels:
        return None
    wheel = remote.Wheel(pick(wheels))
    meta_name = next(n for n in wheel.names() if n.endswith(".dist-info/METADATA"))
    facts: Dict[str, Any] = build_from_metadata(wheel.text(meta_name) or "", marker_env(key))
    tag, glibc = manylinux_glibc(wheel.filename)
    facts.update(wheel=wheel.filename, sha256=wheel.sha256, pythons=pythons_of(wheels), manylinux=tag,
                 glibc=glibc, source={"build": f"{meta_name} Requires-Dist", "pythons": "wheel file names",
                                      "manylinux": "wheel file name"})
    if kernels and facts["build"] == "cuda":
        facts.update(cached_kernels(wheel))
        facts["source"]["archs"] = "torch/lib/libtorch_python.so (torch._C._cuda_getArchFlags string)"
        facts["source"]["fatbin_sample"] = (f"torch/lib/libtorch_cuda.so .nv_fatbin, first {FATBIN_SAMPLE} "
                                            "fat binaries")
    return facts


def kernels(wheel: remote.Wheel) -> Dict[str, Any]:
    """The GPU architectures of a CUDA wheel, and how many bytes of it were fetched to read them."""
    before = fetched(wheel)
    out = {"archs": arch_flags(wheel), "fatbin_sample": fatbin_archs(wheel)}
    out["bytes_read"] = fetched(wheel) - before
    return out


def cached_kernels(wheel: remote.Wheel) -> Dict[str, Any]:
    """`kernels`, kept under the wheel's sha256: reading them fetches 25-30 MB of the wheel."""
    path = remote.cache_root() / "facts" / f"kernels-{wheel.sha256}.json"
    if path.exists():
        return json.loads(path.read_text())
    value = kernels(wheel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, sort_keys=True))
    return value
