"""The GPU/CUDA facts the catalog's CUDA issues read, gathered on the probe's thread pool.

cuda-devices-hidden: which GPUs torch will see (probe/cuda_visible.py); torch-gpu-arch-missing:
the architectures torch was built for (probe/cuda_arch.py); cuda-libs-shadowed: which copy of
each CUDA library the import maps (probe/cuda_libs.py); cuda-toolkit-missing: the toolkit as
torch finds it (probe/cuda_toolkit.py); cuda-driver-too-old and triton-shared-memory: what the live
probe adds (`merge_live`).
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import CudaInfo, CudaLibInfo, CudaToolkitInfo, Facts, TorchInfo
from inductor_doctor.probe import cuda_arch, cuda_libs, cuda_toolkit, cuda_visible
from inductor_doctor.probe.step import Step

_TOO_OLD = re.compile(r"driver on your system is too old \(found version (\d+)\)")


@dataclass
class Static:
    arch_list: Optional[List[str]] = None
    arch_source: Optional[str] = None
    libs: List[CudaLibInfo] = field(default_factory=list)
    toolkit: Optional[CudaToolkitInfo] = None
    torch_notes: List[str] = field(default_factory=list)
    cuda_notes: List[str] = field(default_factory=list)


def static_facts(torch: Optional[TorchInfo], target: Mapping[str, Any], env: Mapping[str, str]) -> Static:
    """Everything that reads files or runs nvcc; independent of the driver, so it runs early."""
    out = Static(toolkit=cuda_toolkit.toolkit_info(env))
    if torch is None or not torch.path or not torch.cuda:
        return out
    cuda_toolkit.library_headers(out.toolkit, torch.path)
    out.arch_list, out.arch_source, out.torch_notes = cuda_arch.torch_arch_list(torch.path)
    roots = list(target.get("site_packages") or [])
    nvidia = (target.get("modules") or {}).get("nvidia")
    if isinstance(nvidia, str):
        roots.append(os.path.dirname(nvidia))
    roots.append(os.path.dirname(torch.path))
    roots = list(dict.fromkeys(r for r in roots if r))
    executable = target.get("executable")
    out.libs, out.cuda_notes = cuda_libs.resolve(
        torch.path, roots, env, os.path.realpath(executable) if isinstance(executable, str) else None,
        str(target.get("machine") or ""), torch.cuda.split(".")[0],
    )
    return out


def fold(cuda: CudaInfo, torch: Optional[TorchInfo], static: Static,
         env: Mapping[str, str]) -> Tuple[CudaInfo, Optional[TorchInfo]]:
    """The static answers put in new sections: `cuda` narrowed to the GPUs torch will see, with the
    libraries, and `torch` with its arch list. The sections given are left as they were."""
    cuda = copy.deepcopy(cuda)
    cuda_visible.apply(cuda, env)
    cuda.libs = static.libs
    cuda.notes.extend(static.cuda_notes)
    if torch is not None:
        torch = replace(torch, cuda_arch_list=static.arch_list, cuda_arch_source=static.arch_source,
                        notes=torch.notes + static.torch_notes)
    return cuda, torch


def merge_live(facts: Facts, live: Dict[str, Any]) -> None:
    """What the live torch adds: its arch list, device count, driver verdict, smem, loaded libraries."""
    if not live.get("import_ok"):
        return
    cuda = facts.cuda
    torch = facts.torch
    if torch is not None and live.get("arch_list") is not None:
        static = torch.cuda_arch_list
        torch.cuda_arch_list = list(live["arch_list"])
        if static is not None and static != torch.cuda_arch_list:
            torch.notes.append(f"the live arch list {torch.cuda_arch_list} differs from the one read "
                               f"from {torch.cuda_arch_source} ({static})")
        torch.cuda_arch_source = "live probe"
    warning = live.get("cuda_init_warning")
    if warning:
        cuda.notes.append(f"live probe: {warning.strip().splitlines()[0][:300]}")
        m = _TOO_OLD.search(warning)
        if m:
            cuda.driver_sufficient = False
            cuda.driver_api_version = int(m.group(1))
    elif live.get("cuda_available") and live.get("cuda_version"):
        cuda.driver_sufficient = True
    if isinstance(live.get("device_count"), int):
        cuda.torch_device_count = live["device_count"]
        if live["device_count"] == 0 and live.get("cuda_version") and cuda.gpus:
            cuda.notes.append("the live torch sees no GPU although the static probe expected "
                              f"{len(cuda.gpus)}: only the driver's list is kept (driver_gpus)")
            cuda.gpus = []
    by_index = {g.index: g for g in cuda.gpus}
    for extra in live.get("gpu_extra") or []:
        gpu = by_index.get(extra.get("index"))
        if gpu is not None and isinstance(extra.get("smem_optin"), int):
            gpu.smem_per_block_optin = extra["smem_optin"]
    loaded = [p for p in live.get("loaded") or [] if isinstance(p, str)]
    for lib in cuda.libs:
        hit = next((p for p in loaded if os.path.basename(p) == lib.soname), None)
        if hit is None:
            hit = next((p for p in loaded if os.path.basename(p).startswith(lib.soname + ".")), None)
        lib.loaded = hit
        if hit and lib.wheel:
            lib.loaded_same_build = cuda_libs.same_build(hit, lib.wheel)


STEP = Step("gpu_catalog", ("torch_files", "target", "environ"), static_facts, lambda m, known: Static(),
            "GPU/CUDA catalog")
