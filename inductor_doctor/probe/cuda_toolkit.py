"""The local CUDA toolkit, found the way torch finds it for AOTInductor and CUDA extensions.

`torch.utils.cpp_extension._find_cuda_home()`: `CUDA_HOME`, else `CUDA_PATH`, else the directory
above the `nvcc` on PATH, else `/usr/local/cuda` if it exists; otherwise None, and everything that
joins a path to it (`_join_cuda_home`: the include directory, `bin/nvcc`) raises "CUDA_HOME
environment variable is not set". A pip-installed torch needs none of this to run or to
`torch.compile` (Triton ships its own ptxas), which is why so many machines lack it until the
first AOTInductor package or CUDA extension build.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import CudaToolkitInfo
from inductor_doctor.probe._proc import c_locale_env, run

NVCC_TIMEOUT_S = 10.0
DEFAULT_HOME = "/usr/local/cuda"
_RELEASE = re.compile(r"release (\d+\.\d+)")
_ARCH = re.compile(r"\bcompute_\d+[a-z]?\b")


def find_cuda_home(env: Mapping[str, str]) -> Tuple[Optional[str], Optional[str]]:
    """`(cuda_home, how it was chosen)` exactly as `_find_cuda_home` chooses (Linux).

    torch takes `CUDA_HOME or CUDA_PATH`: an empty CUDA_PATH (with CUDA_HOME unset or empty) stops the
    search with an empty home, which joins to relative paths: no toolkit, in effect.
    """
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(name):
            return env[name], name
    if env.get("CUDA_PATH") == "":
        return None, "CUDA_PATH set but empty"
    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if nvcc is not None:
        return os.path.dirname(os.path.dirname(nvcc)), f"nvcc on PATH ({nvcc})"
    if os.path.exists(DEFAULT_HOME):
        return DEFAULT_HOME, DEFAULT_HOME
    return None, None


def nvcc_version(nvcc: str) -> Optional[str]:
    """The release nvcc reports, kept under the file's stamp (a repeated check runs no nvcc)."""
    from inductor_doctor.probe import _diskcache

    return _diskcache.of_file("nvcc-version", nvcc, _nvcc_version)


def _nvcc_version(nvcc: str) -> Optional[str]:
    res = run([nvcc, "--version"], timeout_s=NVCC_TIMEOUT_S, env=c_locale_env())
    m = _RELEASE.search(res.stdout) if res.ok else None
    return m.group(1) if m else None


def nvcc_archs(nvcc: str) -> List[str]:
    """The virtual architectures nvcc can compile for, in its own words (`nvcc --list-gpu-arch`,
    CUDA 11 on): what it answers `Unsupported gpu architecture` to is not there."""
    res = run([nvcc, "--list-gpu-arch"], timeout_s=NVCC_TIMEOUT_S, env=c_locale_env())
    if not res.ok:
        return []
    return _ARCH.findall(res.stdout)


def toolkit_info(env: Mapping[str, str]) -> CudaToolkitInfo:
    info = CudaToolkitInfo()
    info.nvcc_on_path = shutil.which("nvcc", path=env.get("PATH"))
    home, source = find_cuda_home(env)
    info.cuda_home, info.source = home, source
    if home is None:
        info.notes.append("no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda: torch finds no "
                          "CUDA toolkit")
        return info
    info.cuda_home_exists = os.path.isdir(home)
    nvcc = os.path.join(home, "bin", "nvcc")
    if os.path.isfile(nvcc) and os.access(nvcc, os.X_OK):
        info.nvcc = nvcc
        info.nvcc_version = nvcc_version(nvcc)
        if info.nvcc_version is None:
            info.notes.append(f"{nvcc} --version did not name a CUDA release")
        info.nvcc_archs = nvcc_archs(nvcc)
        if not info.nvcc_archs:
            info.notes.append(f"{nvcc} --list-gpu-arch named no architecture (an nvcc before CUDA 11?)")
    header = os.path.join(home, "include", "cuda_runtime.h")
    if os.path.isfile(header):
        info.cuda_runtime_h = header
    return info


#: Library headers a toolkit's development packages install that JIT builds include besides torch's
#: own (FlashInfer's sampling includes curand.h; NVRTC-based JITs nvrtc.h; FFT kernels cufft.h).
JIT_HEADERS = ("curand.h", "curand_kernel.h", "cufft.h", "nvrtc.h")
#: The CUDA library headers torch's CUDA context header may include: what `extension_headers` keeps.
_LIBRARY = re.compile(r"^\s*#\s*include\s*<((?:cu|nv)\w*\.h)>")
#: The `#if`s a plain CUDA build of an extension takes: CUDART_VERSION is defined, and an opt-out macro
#: is not (torch 2.13 wraps the header in `#if !defined(TORCH_STABLE_ONLY) && !defined(...)`); not
#: `#if defined(USE_CUDSS)` or `USE_ROCM`.
_CUDA_BUILD = re.compile(
    r"#\s*(?:ifdef\s+CUDART_VERSION|if\s+defined\s*\(?\s*CUDART_VERSION\s*\)?|ifndef\s+\w+"
    r"|if\s+!\s*defined\s*\(?\s*\w+\s*\)?(?:\s*&&\s*!\s*defined\s*\(?\s*\w+\s*\)?)*)\s*$")


def extension_headers(torch_path: str) -> List[str]:
    """The CUDA library headers torch's `ATen/cuda/CUDAContextLight.h` (before 2.1: CUDAContext.h)
    includes in a CUDA build, in its order: those outside any `#if`, and those under `CUDART_VERSION`;
    not those of optional builds (`USE_CUDSS`, `USE_ROCM`)."""
    for name in ("CUDAContextLight.h", "CUDAContext.h"):
        path = os.path.join(torch_path, "include", "ATen", "cuda", name)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        out: List[str] = []
        stack: List[bool] = []  # whether each open #if is one a CUDA build takes
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("#if"):
                stack.append(bool(_CUDA_BUILD.match(stripped)))
            elif stripped.startswith("#endif") and stack:
                stack.pop()
            elif stripped.startswith(("#else", "#elif")) and stack:
                stack[-1] = False
            m = _LIBRARY.match(line)
            if m and all(stack) and m.group(1) not in ("cuda_runtime_api.h", "cuda_runtime.h", "cuda.h"):
                out.append(m.group(1))
        return list(dict.fromkeys(out))
    return []


def library_headers(info: CudaToolkitInfo, torch_path: Optional[str]) -> None:
    """Fill `extension_headers` from the installed torch and `missing_headers` from CUDA_HOME/include,
    for a toolkit that has its runtime headers (one without them is cuda-toolkit-missing's)."""
    if torch_path:
        info.extension_headers = extension_headers(torch_path)
    if not info.cuda_home or info.cuda_runtime_h is None:
        return
    include = os.path.join(info.cuda_home, "include")
    wanted = list(dict.fromkeys([*info.extension_headers, *JIT_HEADERS]))
    info.missing_headers = [h for h in wanted if not os.path.isfile(os.path.join(include, h))]
