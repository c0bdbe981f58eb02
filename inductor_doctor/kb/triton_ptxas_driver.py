"""The NVIDIA driver is older than the CUDA of Triton's ptxas: kernels fail to load.

Triton assembles its PTX with the ptxas it bundles (or `TRITON_PTXAS_PATH`) and hands the cubin
to the driver. A driver of an older CUDA major release than that ptxas (driver 470 = CUDA 11.4
against Triton's CUDA 12 ptxas) rejects the image: `Triton Error [CUDA]: device kernel image is
invalid`, or, for PTX, `the provided PTX was compiled with an unsupported toolchain`. Within one
major release, CUDA's minor-version compatibility lets an older driver load the newer cubin.
The versions predict it; only loading a kernel tells, so the canary launches a one-element Triton
kernel on each GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.kb._catalog import dotted, gpu_sm, no_gpu, outcome, version_tuple
from inductor_doctor.kb._gpus import hidden_reason
from inductor_doctor.kb._ptxas import ptxas_for
from inductor_doctor.kb._rules import not_installed
from inductor_doctor.model import (
    Basis,
    Canary,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.probe.facts import Facts, GPUInfo


def _arch(gpu: GPUInfo) -> Optional[int]:
    cap = gpu_sm(gpu)
    return cap[0] * 10 + cap[1] if cap else None


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if not facts.gpus and not facts.cuda.driver_version:
        return no_gpu("no NVIDIA driver here: Triton's kernels are loaded only on a GPU")
    hidden = hidden_reason(facts)
    if hidden:
        return no_gpu(f"{hidden}: no Triton kernel is loaded")
    driver = facts.cuda.driver_cuda_version
    dv = version_tuple(driver, 2)
    drv = f"driver {facts.cuda.driver_version or '?'}" + (f" (CUDA {dotted(dv)})" if dv else "")
    targets: List[Tuple[Optional[str], Optional[int]]] = [(g.device, _arch(g)) for g in facts.gpus]
    out = []
    for device, arch in targets or [(None, None)]:
        ptxas = ptxas_for(facts, arch)
        pv = version_tuple(ptxas.release, 2)
        if pv is None:
            out.append(outcome(Status.INCONCLUSIVE, "could not determine the CUDA release of the ptxas "
                               f"Triton runs ({ptxas.source})", device=device))
        elif dv is None:
            out.append(outcome(Status.INCONCLUSIVE, f"Triton's ptxas is CUDA {dotted(pv)}; the CUDA "
                               "version the driver supports is unknown", device=device))
        elif dv[0] < pv[0]:
            out.append(outcome(Status.LIKELY, f"{drv} is older than the CUDA {dotted(pv)} ptxas Triton "
                               f"runs ({ptxas.source}: {ptxas.path}): the driver will reject its kernels "
                               "('device kernel image is invalid')", Basis.VERSION, device=device,
                               ptxas=ptxas.path, ptxas_cuda=dotted(pv), driver_cuda=dotted(dv)))
        elif dv < pv:
            out.append(outcome(Status.OK, f"{drv} and Triton's CUDA {dotted(pv)} ptxas ({ptxas.source}) "
                               "share a major release (minor-version compatibility)", Basis.VERSION,
                               device=device))
        else:
            out.append(outcome(Status.OK, f"{drv} is at least as new as Triton's CUDA {dotted(pv)} ptxas "
                               f"({ptxas.source})", Basis.VERSION, device=device))
    return out


ISSUE = KnownIssue(
    id="triton-ptxas-driver",
    title="Driver older than Triton's ptxas: 'device kernel image is invalid'",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "pytorch/pytorch#119054",
        "triton-lang/triton#1556",
        "triton-lang/triton#3001",
        "vllm-project/vllm#5713",
    ),
    aliases=("device-kernel-image-invalid", "driver-too-old-for-triton", "unsupported-ptx-toolchain"),
    summary=(
        "Triton ships its own ptxas (CUDA 12.x in Triton 2.2-3.x). A driver from an older CUDA major "
        "release (e.g. 470 = CUDA 11.4, 515 = CUDA 11.7) cannot load what it produces: every compiled "
        "GPU kernel fails with `Triton Error [CUDA]: device kernel image is invalid` (or `the provided "
        "PTX was compiled with an unsupported toolchain`). Update the driver, or point Triton at a ptxas "
        "no newer than the driver with TRITON_PTXAS_PATH."
    ),
    signatures=(
        Signature(r"device kernel image is invalid", note="CUDA_ERROR_INVALID_IMAGE from cuModuleLoadData"),
        Signature(r"PTX was compiled with an unsupported toolchain",
                  note="CUDA_ERROR_UNSUPPORTED_PTX_VERSION: PTX newer than the driver"),
        Signature(r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
        Signature(r"CUDA: Error- invalid image", note="Triton 1.x wording"),
    ),
    workarounds=(
        Workaround("Update the NVIDIA driver to one of the CUDA major release of Triton's ptxas "
                   "(CUDA 12: driver >= 525)", None, "upgrade"),
        Workaround("Or make Triton use a ptxas from a CUDA toolkit the driver supports",
                   "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas", "env"),
        Workaround("Without a local toolkit, pip provides ptxas: install nvidia-cuda-nvcc-cu11 (or the "
                   "release matching the driver) and point TRITON_PTXAS_PATH at its bin/ptxas", None,
                   "install"),
    ),
    rule=rule,
    canary=Canary("triton_ptxas_driver.py", devices=(DeviceKind.CUDA,), needs=("torch", "triton"),
                  timeout_s=120.0),
)
