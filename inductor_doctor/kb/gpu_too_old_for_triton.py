"""A GPU below compute capability 7.0 (Pascal, Maxwell): Triton, and so Inductor, refuse it.

Triton generates code for sm_70 and newer only. Inductor checks the capability when it creates a
CUDA backend and raises `GPUTooOldForTriton` ("Found Tesla P100 ... which is too old to be
supported by the triton GPU compiler"), so no GPU graph compiles with the default backend. The
capability is a plain fact per GPU (nvidia-smi / the live probe), so no canary is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.kb._catalog import is_gpu_torch, one, outcome, torch_label
from inductor_doctor.kb._gpus import gpus_with_capability, no_visible_gpu
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

MIN_CAPABILITY = (7, 0)


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    if not facts.gpus:
        return no_visible_gpu(facts)
    if facts.torch.hip:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)}: the capability check is CUDA's")
    if not is_gpu_torch(facts):
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} does not compile for the GPU (see "
                   "torch-cpu-only-build)")
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        if cap < MIN_CAPABILITY:
            out.append(outcome(Status.AFFECTED, f"{gpu.name} is sm_{cap[0]}{cap[1]}: Triton supports "
                               "compute capability 7.0 and newer, so Inductor raises GPUTooOldForTriton",
                               device=gpu.device, capability=gpu.sm))
        else:
            out.append(outcome(Status.OK, f"{gpu.name} is sm_{cap[0]}{cap[1]} (>= 7.0)", device=gpu.device))
    return out


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --gpu sm_XX`: the capability alone decides."""
    if inp.gpu_sm is None:
        return unpredictable("it needs the GPU (--gpu)", with_option("--gpu sm_XX", "gpu-too-old-for-triton"))
    if inp.gpu_sm < MIN_CAPABILITY[0] * 10:
        return [RuleOutcome(Status.AFFECTED, f"sm_{inp.gpu_sm} is below 7.0: Triton (and so GPU "
                            "torch.compile) does not support it", Basis.VERSION)]
    return [RuleOutcome(Status.OK, f"sm_{inp.gpu_sm} is 7.0 or newer", Basis.VERSION)]
