"""Triton kernels tuned for A100/H100 ask for more shared memory than this GPU has per block.

A Triton kernel's tile sizes and `num_stages` fix how much shared memory one block needs. Kernels
and autotuning configs written on data-center GPUs (227 KB per block on H100, 163 KB on A100)
exceed what consumer and inference GPUs allow: 99 KB on Ampere/Ada/Blackwell GeForce and
workstation parts (sm_86, sm_89, sm_120), 96 KB on V100, 64 KB on T4/Turing. The launch then fails
with "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072,
Hardware limit: 101376. Reducing block sizes or `num_stages` may help." (triton-lang/triton#8182,
vllm-project/vllm#36802). Inductor's max-autotune reports each candidate config that does not fit
("Runtime error during autotuning: No valid triton configs. OutOfResources ... Ignoring this
choice") and picks among the rest (Physical-Intelligence/openpi#654): that alone is no failure.

Whether it happens depends on the kernels a program runs, so the verdict for a small GPU is a
warning-level `likely`; the per-block limit is a fact (the live probe's
`shared_memory_per_block_optin`, else NVIDIA's table for the compute capability).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import gpu_sm, is_gpu_torch, outcome, torch_label
from inductor_doctor.kb._gpus import no_visible_gpu
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, GPUInfo
    from inductor_doctor.core.gpu_target import GpuTarget

#: Maximum shared memory per block with opt-in, in bytes, by compute capability (NVIDIA's CUDA
#: Programming Guide, "Technical Specifications per Compute Capability"; NVIDIA/cccl
#: cudax/.../arch_traits.cuh: the SM's shared memory less 1 KB reserved per block from sm_80 on).
SMEM_OPTIN: Dict[Tuple[int, int], int] = {
    (7, 0): 98304, (7, 2): 98304, (7, 5): 65536,
    (8, 0): 166912, (8, 6): 101376, (8, 7): 166912, (8, 9): 101376,
    (9, 0): 232448, (10, 0): 232448, (12, 0): 101376, (12, 1): 101376,
}  # fmt: skip
#: Below A100's limit, kernels and configs tuned on A100/H100 stop fitting.
DATACENTER = 166912

#: AMD: the LDS one workgroup may allocate, in bytes (what Triton's HIP driver reads as the device's
#: `max_shared_mem`, hipDeviceProp_t.sharedMemPerBlock): 64 KiB on GCN/CDNA up to MI300 (AMD Instinct
#: MI200/MI300 ISA reference guides, "Local Data Share") and on RDNA (a workgroup's share of a WGP's
#: 128 KiB, RDNA3 ISA), 160 KiB on CDNA4 (MI350/MI355X, gfx950).
LDS_PER_WORKGROUP: Dict[str, int] = {
    "gfx908": 65536, "gfx90a": 65536, "gfx940": 65536, "gfx941": 65536, "gfx942": 65536, "gfx950": 163840,
    "gfx1030": 65536, "gfx1100": 65536, "gfx1101": 65536, "gfx1102": 65536, "gfx1151": 65536,
    "gfx1200": 65536, "gfx1201": 65536,
}  # fmt: skip


def limit(gpu: GPUInfo) -> Tuple[Optional[int], str]:
    """`(bytes, where from)` of a GPU's per-block shared memory limit."""
    if gpu.smem_per_block_optin:
        return gpu.smem_per_block_optin, "live probe"
    cap = gpu_sm(gpu)
    if cap is not None and cap in SMEM_OPTIN:
        return SMEM_OPTIN[cap], f"sm_{cap[0]}{cap[1]} table"
    return None, ""


def target_limit(target: GpuTarget) -> Tuple[Optional[int], str]:
    """`(bytes, where from)` of a described GPU's per-block shared memory (`check --gpu`): the
    cross-target canary holds its shared-memory kernel to it, as Triton's loader would there."""
    if target.backend == "hip":
        lds = LDS_PER_WORKGROUP.get(str(target.gfx))
        return (lds, f"{target.gfx} table") if lds else (None, "")
    sm = target.sm or 0
    cap = (sm // 10, sm % 10)
    return (SMEM_OPTIN[cap], f"sm_{sm} table") if cap in SMEM_OPTIN else (None, "")


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if facts.torch is not None and facts.torch.version and not is_gpu_torch(facts):
        return [RuleOutcome(Status.NOT_APPLICABLE, f"{torch_label(facts)} compiles no Triton GPU kernels",
                            Basis.STATIC)]
    if not facts.gpus:
        return no_visible_gpu(facts)
    out = []
    for gpu in facts.gpus:
        smem, source = limit(gpu)
        if smem is None:
            out.append(outcome(Status.INCONCLUSIVE, f"{gpu.name}: shared memory per block unknown (the live "
                               "probe, --live, asks torch)", device=gpu.device))
        elif (replayed := foreign_autotune(facts, gpu, smem)) is not None:
            out.append(outcome(Status.LIKELY, f"{gpu.name} allows {smem} bytes of shared memory per block "
                               f"({source}); {replayed}", device=gpu.device, smem_per_block=smem))
        elif smem < DATACENTER:
            out.append(outcome(Status.LIKELY, f"{gpu.name} allows {smem} bytes of shared memory per block "
                               f"({source}): Triton kernels tuned on A100/H100 fail here with "
                               "'OutOfResources: out of resource: shared memory, ... Hardware limit: "
                               f"{smem}'",
                               device=gpu.device, smem_per_block=smem))
        else:
            out.append(outcome(Status.OK, f"{gpu.name} allows {smem} bytes of shared memory per block "
                               f"({source}), as much as the GPUs Triton kernels are usually tuned on",
                               device=gpu.device))
    return out


def foreign_autotune(facts: Facts, gpu: GPUInfo, smem: int) -> Optional[str]:
    """An autotune cache written on another GPU: tables not keyed by the GPU (DeepSpeed's
    `~/.triton/autotune/*.pickle`) beside Triton kernels compiled for another architecture that need
    more shared memory per block than this GPU has. The configs those tables hold were chosen there,
    and a program replays them here: OutOfResources (deepbeepmeep/Wan2GP#1950: "clear the
    .triton\\autotune folder"). None when the caches show nothing of the kind."""
    found = facts.caches.autotune if facts.caches is not None else None
    cap = gpu_sm(gpu)
    if found is None or not found.tables or cap is None:
        return None
    here = f"cuda {cap[0] * 10 + cap[1]}"
    over = sorted(((need, target) for target, need in found.kernels.items()
                   if target != here and target.startswith("cuda ") and need > smem), reverse=True)
    if not over:
        return None
    need, target = over[0]
    arch = "sm_" + target.split()[1]
    more = f" and {len(found.tables) - 2} more" if len(found.tables) > 2 else ""
    tables = ", ".join(found.tables[:2]) + more
    return (f"an autotune cache written on another GPU: the Triton cache holds kernels compiled for {arch} "
            f"needing up to {need} bytes per block, beside autotune tables not keyed by the GPU ({tables}): "
            "a config chosen there replays here and fails with 'OutOfResources: out of resource: shared "
            f"memory, ... Hardware limit: {smem}'")
