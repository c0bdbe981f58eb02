"""What torch's XPU build and Triton's Intel backend need from Intel's driver stack, read from files.

torch.xpu talks to the GPU through the Level Zero loader (`libze_loader.so.1`, `ze_loader.dll`) and
Intel's GPU driver for it (`libze_intel_gpu.so.1`, the compute runtime), which builds every kernel
with IGC (`libigc`). Triton's Intel backend (`backends/intel/driver.py`) compiles its launcher against
`level_zero/ze_api.h` under `$LEVEL_ZERO_V1_SDK_PATH/include`, else `$ZE_PATH/include` (default
`/usr/local/include`), and against a SYCL runtime it finds through `icpx`, `ONEAPI_ROOT` or the
`intel-sycl-rt` wheel ("sycl headers not found, please install `icpx` compiler"). The versions come
from the libraries' file names (`libze_loader.so.1.21.9`) and, on Debian and Ubuntu, the package
database. Read only for an XPU build of torch: a stat per library directory, one read of the
package database.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.facts import TorchInfo, XpuInfo

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", "/opt/intel/oneapi/lib")
DPKG_STATUS = "/var/lib/dpkg/status"
#: The packages of Intel's GPU driver stack whose versions say which driver this is.
DRIVER_PACKAGES = ("intel-opencl-icd", "libze-intel-gpu1", "intel-level-zero-gpu", "libze1", "level-zero",
                   "libigc1", "libigc2", "intel-igc-core", "intel-igc-core-2")
_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


def is_xpu_torch(torch: Optional[TorchInfo]) -> bool:
    return torch is not None and "+xpu" in (torch.version or "")


def torch_xpu_version(torch_path: Optional[str]) -> Optional[str]:
    """`torch.version.xpu` (the oneAPI release the build used, "20250101"), from version.py."""
    if not torch_path:
        return None
    from inductor_doctor.probe.torch_build import read_version_py

    try:
        value = read_version_py(os.path.join(torch_path, "version.py")).get("xpu")
    except (OSError, SyntaxError, ValueError):
        return None
    return str(value) if value else None


def find_library(stem: str, dirs: Sequence[str]) -> Tuple[Optional[str], Optional[str]]:
    """(the library `<stem>.so*` in the first directory that has it, its version from the real file's
    name); (None, None) when none has it."""
    for folder in dirs:
        hits = sorted(glob.glob(os.path.join(folder, stem + ".so*")))
        if not hits:
            continue
        real = os.path.realpath(hits[0])
        m = _SO_VERSION.search(os.path.basename(real)) or _SO_VERSION.search(hits[-1])
        return hits[0], m.group(1) if m else None
    return None, None


def library_dirs(environ: Mapping[str, str], extra: Sequence[str] = ()) -> List[str]:
    dirs = [d for d in (environ.get("LD_LIBRARY_PATH") or "").split(os.pathsep) if d]
    return [*dirs, *extra, *LIB_DIRS]


def dpkg_versions(path: str = DPKG_STATUS, names: Sequence[str] = DRIVER_PACKAGES) -> Dict[str, str]:
    """The installed versions of Intel's driver packages, from the package database (Debian, Ubuntu)."""
    out: Dict[str, str] = {}
    wanted = set(names)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            package = status = None
            for line in f:
                if line.startswith("Package: "):
                    package, status = line[9:].strip(), None
                elif line.startswith("Status: "):
                    status = line[8:].strip()
                elif line.startswith("Version: ") and package in wanted and status and "installed" in status:
                    out[package] = line[9:].strip()
    except OSError:
        pass
    return out


def header_search(environ: Mapping[str, str]) -> List[str]:
    """Where Triton's Intel backend's launcher build finds `level_zero/ze_api.h`: its `-I` (from
    `LEVEL_ZERO_V1_SDK_PATH`, else `ZE_PATH`, else /usr/local), then the compiler's own default
    (/usr/include on Linux)."""
    root = environ.get("LEVEL_ZERO_V1_SDK_PATH") or environ.get("ZE_PATH") or "/usr/local"
    search = [os.path.join(root, "include")]
    if not sys.platform.startswith("win"):
        search.append("/usr/include")
    return search


def find_sycl(environ: Mapping[str, str], packages: Mapping[str, str]) -> Optional[str]:
    """How Triton's Intel backend would find SYCL (`find_sycl`): `icpx` on PATH, `ONEAPI_ROOT`, or the
    `intel-sycl-rt` wheel from 2025 on; None: none of them."""
    for folder in (environ.get("PATH") or "").split(os.pathsep):
        for name in ("icpx", "icpx.exe"):
            if folder and os.path.isfile(os.path.join(folder, name)):
                return f"icpx at {os.path.join(folder, name)}"
    oneapi = environ.get("ONEAPI_ROOT")
    if oneapi and os.path.isdir(os.path.join(oneapi, "compiler", "latest", "include", "sycl")):
        return f"ONEAPI_ROOT={oneapi}"
    rt = packages.get("intel-sycl-rt")
    if rt and not rt.startswith("2024"):
        return f"intel-sycl-rt {rt}"
    return None


def gather_xpu(environ: Mapping[str, str], torch: Optional[TorchInfo], packages: Mapping[str, str],
               lib_dirs: Optional[Sequence[str]] = None, dpkg_status: str = DPKG_STATUS) -> XpuInfo:
    info = XpuInfo(torch_xpu=torch_xpu_version(torch.path if torch else None))
    if sys.platform == "win32":
        system32 = os.path.join(environ.get("SystemRoot") or r"C:\Windows", "System32")
        for attr, name in (("ze_loader", "ze_loader.dll"), ("ze_driver", "ze_intel_gpu64.dll"),
                           ("igc", "igc64.dll")):
            path = os.path.join(system32, name)
            setattr(info, attr, path if os.path.isfile(path) else None)
    else:
        dirs = list(lib_dirs) if lib_dirs is not None else library_dirs(environ)
        info.ze_loader, info.ze_loader_version = find_library("libze_loader", dirs)
        info.ze_driver, info.ze_driver_version = find_library("libze_intel_gpu", dirs)
        info.igc, info.igc_version = find_library("libigc", dirs)
        info.driver_packages = dpkg_versions(dpkg_status)
    info.ze_header_search = header_search(environ)
    for folder in info.ze_header_search:
        header = os.path.join(folder, "level_zero", "ze_api.h")
        if os.path.isfile(header):
            info.ze_headers = header
            break
    info.sycl = find_sycl(environ, packages)
    return info
