"""The `catalog` step: the driver's and toolkit's answers with the GPUs torch will see, and torch
with its arch list (`gpu_catalog.fold`), as new sections: the probes' own answers stay untouched,
since another step may still read them. The `cuda` and `torch` steps take their halves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, Optional, Tuple

from inductor_doctor.core.facts import CudaInfo, TorchInfo
from inductor_doctor.probe.gpu_catalog import fold
from inductor_doctor.probe.step import Step

#: The CUDA runtime wheels torch may ship with, newest naming first.
RUNTIME_WHEELS = ("nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11",
                  "nvidia-cuda-runtime")


def runtime_hint(pkgs: Dict[str, str], torch_cuda: Optional[str]) -> Optional[str]:
    """The CUDA runtime torch ships: the nvidia-cuda-runtime wheel, else torch's build version."""
    for name in RUNTIME_WHEELS:
        if name in pkgs:
            return pkgs[name]
    return torch_cuda


def cuda_static(toolkit_cuda: CudaInfo, pkgs: Dict[str, str], torch_info: Optional[TorchInfo],
                catalog: Any, env: Dict[str, str]) -> Tuple[CudaInfo, Optional[TorchInfo]]:
    runtime = runtime_hint(pkgs, torch_info.cuda if torch_info else None)
    return fold(replace(toolkit_cuda, runtime_version=runtime), torch_info, catalog, env)


STEP = Step("catalog", ("toolkit_cuda", "packages", "torch_files", "gpu_catalog", "environ"), cuda_static,
            lambda m, known: (known["toolkit_cuda"], known["torch_files"]), "GPU/CUDA catalog")
