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
