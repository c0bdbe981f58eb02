"""The platform the target runs on, in the terms its compile failures need (`Facts.platform`).

On every platform: the paths the compile stack writes under or puts on a compiler's command line
(the Inductor and Triton caches `probe/caches.py` computed, Python's include directory, torch, the
temporary and home directories), with their length and the characters that break there. Then the
section of each platform the checks elsewhere are not written for, read only where it applies:
Windows (probe/windows.py: the registry, code pages, MSVC's environment, `CC`/`CXX`, how torch builds
its `cl` command), ROCm (probe/rocm.py: `ld.lld` and the HIP headers where Triton and torch look),
an XPU build of torch (probe/xpu.py: Level Zero, IGC, the headers Triton's Intel backend needs), and
macOS's version. Files and variables only, no subprocess: milliseconds.
"""

from __future__ import annotations

import platform as _platform  # the standard library's
import time
from typing import Any, Dict, List, Mapping, Optional

from inductor_doctor.core.facts import CacheInfo, PathFact, PlatformInfo, TorchInfo, TritonInfo
from inductor_doctor.probe import Step
from inductor_doctor.probe.windows import path_fact


def paths(target: Mapping[str, Any], environ: Mapping[str, str], torch: Optional[TorchInfo],
          caches: Optional[CacheInfo]) -> List[PathFact]:
    found: List[PathFact] = []
    for d in (caches.dirs if caches is not None else []):
        found.append(path_fact(f"{d.name} cache", d.path))
    named = (("python include", target.get("include_dir")), ("python", target.get("executable")),
             ("torch", torch.path if torch else None),
             ("temp", environ.get("TEMP") or environ.get("TMP") or environ.get("TMPDIR")),
             ("home", environ.get("USERPROFILE") or environ.get("HOME")))
    for name, value in named:
        if value:
            found.append(path_fact(name, str(value)))
    return found


def gather(target: Mapping[str, Any], environ: Mapping[str, str], torch: Optional[TorchInfo],
           triton: Optional[TritonInfo], caches: Optional[CacheInfo],
           packages: Optional[Dict[str, str]] = None) -> PlatformInfo:
    start = time.monotonic()
    system = str(target.get("platform") or "")
    info = PlatformInfo(system=system, machine=str(target.get("machine") or ""))
    info.paths = paths(target, environ, torch, caches)
    if system == "win32":
        from inductor_doctor.probe.windows import gather_windows

        executable = target.get("executable")
        info.windows = gather_windows(environ, torch.path if torch else None, triton.path if triton else None,
                                      python_executable=str(executable) if executable else None)
    elif system == "darwin":
        info.mac_version = _platform.mac_ver()[0] or None
    from inductor_doctor.probe import rocm, xpu

    if rocm.is_rocm_torch(torch):
        info.rocm = rocm.gather_rocm(environ, torch, triton, list(target.get("site_packages") or []))
    if xpu.is_xpu_torch(torch):
        info.xpu = xpu.gather_xpu(environ, torch, packages or {})
    info.duration_s = time.monotonic() - start
    return info


STEP = Step("platform", ("target", "environ", "torch_files", "triton_installed", "caches", "packages"),
            gather,
            lambda m, known: PlatformInfo(system=str((known.get("target") or {}).get("platform") or "")),
            "platform")
