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

from inductor_doctor.core.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
from inductor_doctor.kb._catalog import gpu_sm, is_gpu_torch, outcome, torch_label
from inductor_doctor.kb._gpus import no_visible_gpu
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, GPUInfo

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


def limit(gpu: GPUInfo) -> Tuple[Optional[int], str]:
    """`(bytes, where from)` of a GPU's per-block shared memory limit."""
    if gpu.smem_per_block_optin:
        return gpu.smem_per_block_optin, "live probe"
    cap = gpu_sm(gpu)
    if cap is not None and cap in SMEM_OPTIN:
        return SMEM_OPTIN[cap], f"sm_{cap[0]}{cap[1]} table"
    return None, ""


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


#: A kernel asking for more shared memory per block than any GPU has (227 KB on H100/B200) fails on
#: every GPU: its own configuration is at fault, not this GPU (state-spaces/mamba#387: 663808 bytes).
_NO_GPU = r"out of resource: shared memory, Required: (?:2(?:3[3-9]|[4-9]\d)\d{3}|[3-9]\d{5}|\d{7,})\b"
_NO_GPU_SAYS = "the kernel asks for more shared memory than any GPU has per block (227 KB at most)"

ISSUE = KnownIssue(
    id="triton-shared-memory",
    title="Triton 'OutOfResources: out of resource: shared memory' on GPUs with little shared memory",
    severity=Severity.WARNING,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "triton-lang/triton#8182",
        "vllm-project/vllm#36802",
        "Physical-Intelligence/openpi#654",
        "vllm-project/vllm#12498",
        "InternLM/lmdeploy#2451",
    ),
    aliases=("out-of-resource-shared-memory", "triton-outofresources", "hardware-limit-101376"),
    summary=(
        "Triton kernels and autotuning configs tuned on A100/H100 (163/227 KB of shared memory per block) "
        "do not fit GPUs with less: 99 KB on RTX 30xx/40xx/50xx, A10, L4, L40 (Hardware limit: 101376), "
        "96 KB on V100, 64 KB on T4 (65536). The launch fails with `triton.runtime.errors.OutOfResources: "
        "out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or "
        "`num_stages` may help.`; under max-autotune, with every config failing, `No valid triton configs`. "
        "Mostly a triage signature: the fix is in the kernel's configs."
    ),
    signatures=(
        Signature(r"out of resource: shared memory, Required: \d+, Hardware limit(?:ation)?: "
                  r"(?:49152|65536|98304|101376)\b(?![^\n]*(?:\bAMD\b|ROCm|\bMI\d{3}|gfx\d))",
                  note="Triton's OutOfResources on an NVIDIA GPU with <= 99 KB of shared memory per block "
                  "(AMD's 64 KB LDS says the same: not this CUDA check)",
                  # max-autotune reports and skips each config that does not fit, then picks among
                  # the rest (Physical-Intelligence/openpi#654): nothing failed.
                  unless=r"Runtime error during autotuning",
                  against=_NO_GPU, against_says=_NO_GPU_SAYS),
        Signature(r"out of resource: shared memory, Required: \d+, Hardware limit", strength="partial",
                  against=_NO_GPU, against_says=_NO_GPU_SAYS, subject=("triton", "triton-kernel", "inductor"),
                  note="the kernel asks for more than this GPU's limit, whatever the GPU"),
        Signature(r"No valid triton configs", strength="partial",
                  note="Inductor autotuning: every candidate config failed"),
    ),
    workarounds=(
        Workaround("Lower the failing kernel's BLOCK sizes or num_stages (its autotune configs) for this "
                   "GPU; for library kernels, upgrade to a release tuned for it", None, "code"),
        Workaround("If an old autotune result is replayed, clear Triton's cache",
                   "rm -rf ~/.triton/cache", "other"),
        Workaround("Under torch.compile max-autotune, fall back to the default mode for the failing model",
                   None, "code"),
    ),
    rule=rule,
)
