"""The NVIDIA side, without loading any CUDA library into this process.

Sources, cheapest first: `/proc/driver/nvidia/version` (the kernel module's version), `nvidia-smi`
(GPUs and the CUDA version the driver supports; it can hang in a wedged driver, so it runs under a
timeout), the loader cache for `libcuda.so` (what Triton links against), and `ptxas --version`.
Where `nvidia-smi` is missing, `cuDriverGetVersion` is called through ctypes in a throwaway
subprocess: a broken libcuda may crash whoever loads it, and that must not be the doctor.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import CudaInfo, GPUInfo
from inductor_doctor.probe import loader
from inductor_doctor.probe._proc import c_locale_env, run
from inductor_doctor.probe.step import Step

SMI_TIMEOUT_S = 15.0
PROC_VERSION = "/proc/driver/nvidia/version"
WSL_LIB = "/usr/lib/wsl/lib"

_DRIVER = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_SMI_HEADER = re.compile(r"Driver Version\s*:\s*([\d.]+).*?CUDA Version\s*:\s*([\d.]+)", re.S)
#: The header of `nvidia-smi -q` (driver, CUDA version) with one small section after it: the bare
#: banner asks NVML for every GPU's power, clocks and processes (0.39 s on a 4 x H100 host, against
#: 0.06 s for this), and a repeated check pays it before every job.
SMI_HEADER_ARGS = ["-q", "-d", "COMPUTE"]
_PTXAS = re.compile(r"release (\d+\.\d+)(?:, V([\d.]+))?")

_DRIVER_VERSION_SCRIPT = (
    "import ctypes,sys\n"
    "lib=ctypes.CDLL(sys.argv[1])\n"
    "v=ctypes.c_int(0)\n"
    "r=lib.cuDriverGetVersion(ctypes.byref(v))\n"
    "print(r, v.value)\n"
)


def driver_from_proc(path: str = PROC_VERSION) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            m = _DRIVER.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def parse_gpu_csv(text: str) -> List[GPUInfo]:
    """`index, name, compute_cap, memory.total [MiB], uuid[, memory.free, memory.used]` lines from
    nvidia-smi (in MiB, `nounits`)."""
    gpus = []
    for line in text.splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < 2 or not cols[0].isdigit():
            continue
        gpu = GPUInfo(index=int(cols[0]), name=cols[1])
        if len(cols) > 2 and re.fullmatch(r"\d+\.\d+", cols[2]):
            gpu.sm = cols[2]
        if len(cols) > 3:
            m = re.match(r"(\d+)", cols[3])
            gpu.memory_mib = int(m.group(1)) if m else None
        if len(cols) > 4 and cols[4].startswith("GPU-"):
            gpu.uuid = cols[4]
        if len(cols) > 6 and cols[5].isdigit() and cols[6].isdigit():
            gpu.memory_free_mib, gpu.memory_used_mib = int(cols[5]), int(cols[6])
        gpus.append(gpu)
    return gpus


def _smi(path: str, args: List[str]) -> Tuple[bool, str, str]:
    res = run([path, *args], timeout_s=SMI_TIMEOUT_S, env=c_locale_env())
    return res.ok, res.stdout, res.why() if not res.ok else ""


def query_nvidia_smi(path: str, info: CudaInfo) -> None:
    """GPUs and the driver's CUDA version; two calls in parallel (the query and the header; the
    bare banner only where the header has no CUDA version)."""
    fields = "index,name,compute_cap,memory.total,uuid,memory.free,memory.used"
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="indoc-smi") as ex:
        q = ex.submit(_smi, path, [f"--query-gpu={fields}", "--format=csv,noheader,nounits"])
        banner = ex.submit(_smi_header, path)
        ok, out, why = q.result()
        if not ok:  # drivers before ~510 do not know compute_cap
            ok, out, why = _smi(
                path, ["--query-gpu=index,name,memory.total,uuid,memory.free,memory.used",
                       "--format=csv,noheader,nounits"]
            )
            if ok:
                out = "\n".join(_insert_blank_cap(line) for line in out.splitlines())
        if ok:
            info.gpus = parse_gpu_csv(out)
        else:
            info.notes.append(f"nvidia-smi --query-gpu failed: {why}")
        ok_b, text, why_b = banner.result()
    if ok_b:
        m = _SMI_HEADER.search(text)
        if m:
            info.driver_version = info.driver_version or m.group(1)
            info.driver_cuda_version = m.group(2)
    else:
        info.notes.append(f"nvidia-smi failed: {why_b}")


def _smi_header(path: str) -> Tuple[bool, str, str]:
    ok, text, why = _smi(path, SMI_HEADER_ARGS)
    if ok and _SMI_HEADER.search(text):
        return ok, text, why
    return _smi(path, [])


def _insert_blank_cap(line: str) -> str:
    cols = line.split(",")
    return ",".join(cols[:2] + [" "] + cols[2:])


def driver_cuda_via_ctypes(libcuda: str) -> Tuple[Optional[str], Optional[str]]:
    """The driver's CUDA version from cuDriverGetVersion, in a subprocess: `(version, error)`."""
    res = run([sys.executable, "-I", "-c", _DRIVER_VERSION_SCRIPT, libcuda], timeout_s=SMI_TIMEOUT_S)
    if not res.ok:
        return None, res.why()
    try:
        rc, value = (int(x) for x in res.stdout.split()[:2])
    except ValueError:
        return None, f"unexpected answer {res.stdout.strip()[:80]!r}"
    if rc != 0 or value <= 0:
        return None, f"cuDriverGetVersion returned {rc}"
    return f"{value // 1000}.{(value % 1000) // 10}", None


def is_elf_file(path: str) -> bool:
    """`path` (after its links) is a readable file that starts as a shared library does."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def libcuda_dirs(env: Mapping[str, str], machine: str) -> Tuple[List[str], List[str]]:
    """Triton's `libcuda_dirs()`: `(dirs, libcuda.so.1 files seen)`.

    Triton takes `TRITON_LIBCUDA_PATH`, else the directories of `libcuda.so.1` in `ldconfig -p`,
    else the `LD_LIBRARY_PATH` entries holding `libcuda.so.1`, and then asserts that one of them
    has a plain `libcuda.so` (it links `-lcuda`). WSL keeps it in /usr/lib/wsl/lib.
    """
    if env.get("TRITON_LIBCUDA_PATH"):
        return [env["TRITON_LIBCUDA_PATH"]], []
    locs = loader.ldconfig_find("libcuda.so.1", machine)
    dirs = [os.path.dirname(p) for p in locs]
    if not dirs:
        ld = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
        dirs = [d for d in ld if os.path.exists(os.path.join(d, "libcuda.so.1"))]
    if not dirs and os.path.exists(os.path.join(WSL_LIB, "libcuda.so.1")):
        dirs = [WSL_LIB]
    return dirs, locs


def ptxas_version(path: str) -> Tuple[Optional[str], Optional[str]]:
    """`(release, full)`: "12.8" is what Triton compares; "12.8.93" goes into the notes. Kept under
    the binary's stamp (a repeated check runs no ptxas); a failure is never kept."""
    from inductor_doctor.probe import _diskcache

    found = _diskcache.of_file("ptxas-version", path, _ptxas_version)
    return (found[0], found[1]) if found else (None, None)


def _ptxas_version(path: str) -> Optional[List[str]]:
    res = run([path, "--version"], timeout_s=10, env=c_locale_env())
    m = _PTXAS.search(res.stdout) if res.ok else None
    return [m.group(1), m.group(2)] if m else None


def ptxas_candidates(env: Mapping[str, str], bundled: Optional[str]) -> List[Tuple[str, str]]:
    """`(path, source)` in Triton's order (env override, its own copy), then the system's."""
    out: List[Tuple[str, str]] = []
    if env.get("TRITON_PTXAS_PATH"):
        out.append((env["TRITON_PTXAS_PATH"], "TRITON_PTXAS_PATH"))
    if bundled:
        out.append((bundled, "bundled with triton"))
    found = shutil.which("ptxas", path=env.get("PATH"))
    if found:
        out.append((found, "PATH"))
    for home in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            out.append((os.path.join(home, "bin", "ptxas"), f"{home}/bin"))
    return out


def driver_info(env: Optional[Mapping[str, str]] = None) -> CudaInfo:
    """Driver, the CUDA version it supports, GPUs. No GPU: an empty list and a note."""
    env = env if env is not None else os.environ
    info = CudaInfo()
    info.driver_version = driver_from_proc()
    smi = shutil.which("nvidia-smi", path=env.get("PATH"))
    if smi:
        info.nvidia_smi = smi
        query_nvidia_smi(smi, info)
    elif info.driver_version:
        info.notes.append("the NVIDIA driver is loaded but nvidia-smi is not on PATH")
    if not info.driver_version and not smi:
        info.notes.append(f"no NVIDIA driver here (no {PROC_VERSION}, no nvidia-smi): no CUDA GPUs")
    return info


def toolkit_info(
    info: CudaInfo,
    env: Optional[Mapping[str, str]] = None,
    machine: str = "",
    bundled_ptxas: Optional[str] = None,
) -> CudaInfo:
    """Adds libcuda (as Triton finds it) and ptxas (as Triton picks it) to `info`."""
    env = env if env is not None else os.environ
    dirs, locs = libcuda_dirs(env, machine)
    # Only files that are there: a loader cache outlives what it lists (a directory unmounted or
    # hidden, a driver removed), and Triton, which takes its directories, then finds nothing.
    listed = locs or [os.path.join(d, "libcuda.so.1") for d in dirs]
    info.libcuda_paths = [p for p in listed if is_elf_file(p)]
    info.libcuda_missing = [p for p in locs if p not in info.libcuda_paths]
    info.libcuda_so_unversioned = any(os.path.exists(os.path.join(d, "libcuda.so")) for d in dirs)
    if info.libcuda_paths and not info.libcuda_so_unversioned:
        info.notes.append(
            "libcuda.so.1 is present but no plain libcuda.so next to it: Triton fails with "
            "'libcuda.so cannot found!' (run ldconfig, or set TRITON_LIBCUDA_PATH)"
        )
    if info.driver_cuda_version is None and info.libcuda_paths:
        version, err = driver_cuda_via_ctypes(info.libcuda_paths[0])
        info.driver_cuda_version = version
        if err:
            info.notes.append(f"cuDriverGetVersion: {err}")
    for path, source in ptxas_candidates(env, bundled_ptxas):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            info.ptxas_path = path
            release, full = ptxas_version(path)
            info.ptxas_version = release
            info.notes.append(f"ptxas: {source}" + (f" (V{full})" if full else ""))
            break
    return info


#: The NVIDIA driver's answers (nvidia-smi, libcuda, /proc), started at once.
STEP = Step("driver", ("environ",), driver_info, lambda m, known: CudaInfo(notes=[m]), "driver")
