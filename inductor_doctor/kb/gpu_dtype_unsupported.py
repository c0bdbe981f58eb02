"""A dtype the GPU cannot compile: float8_e4m3fn below sm_89, bfloat16 below sm_80.

Triton gates its `fp8e4nv` type (torch.float8_e4m3fn) on the compute capability: `allow_fp8e4nv =
capability >= 89` in `backends/nvidia/compiler.py` (3.0, 3.1), `supported_fp8_dtypes.add("fp8e4nv")`
under `if capability >= 89` (3.2-3.9); a kernel that uses it on an older GPU is refused in the front
end ("type fp8e4nv not supported in this architecture", `language/core.py`, 3.2-3.9; "fp8e4nv data
type is not supported on CUDA arch < 89", `language/semantic.py`, 2.2-3.1). Inductor's own cast
kernel is such a kernel (pytorch/pytorch#167082). bfloat16 arithmetic and conversions are PTX
instructions that need sm_80 (`cvt.rn.bf16.f32`, `.bf16` types): a Triton that lowers bf16 to them
fails in ptxas below sm_80 ("Feature '.bf16' requires .target sm_80 or higher": 3.2 does for a bf16
`tl.dot` on sm_70; 3.7 emulates it), so that part is the cross-target canary's to tell.

The GPU's capability decides fp8 (a static fact); whether the workload uses the dtype is not known
here, so the issue is a warning: `affected` says "this GPU cannot compile it", not "your program
fails". The cross-target canary compiles both kernels for a GPU that is not here (`check --gpu`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import outcome
from inductor_doctor.kb._gpus import gpus_with_capability, no_visible_gpu
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: The first compute capability Triton compiles fp8e4nv for (3.0-3.9, read from each release's
#: backends/nvidia/compiler.py).
FP8E4NV_FROM = 89
#: The first architecture whose PTX has bf16 instructions (PTX ISA: `cvt.rn.bf16.f32`, `.bf16`).
BF16_FROM = 80


def judge(arch: int, name: str) -> RuleOutcome:
    """What a GPU of architecture `arch` (86 for sm_86) can compile, as one outcome."""
    if arch >= FP8E4NV_FROM:
        return RuleOutcome(Status.OK, f"{name} is sm_{arch}: Triton compiles float8_e4m3fn (fp8e4nv, from "
                           f"sm_{FP8E4NV_FROM}) and bfloat16 for it", Basis.STATIC)
    bf16 = ("; bfloat16 too where the Triton release lowers it to native PTX (ptxas: \"Feature '.bf16' "
            f"requires .target sm_{BF16_FROM} or higher\")") if arch < BF16_FROM else ""
    return RuleOutcome(Status.AFFECTED, f"{name} is sm_{arch}: Triton compiles no float8_e4m3fn (fp8e4nv) "
                       f"kernel for it (needs sm_{FP8E4NV_FROM}): a workload using it fails with \"type "
                       f"fp8e4nv not supported in this architecture\"{bf16}", Basis.STATIC)


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if not facts.gpus:
        return no_visible_gpu(facts)
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        said = judge(cap[0] * 10 + cap[1], gpu.name)
        out.append(outcome(said.status, said.reason, said.basis, device=gpu.device))
    return out


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --gpu sm_86`: the capability alone decides (what the workload uses is not known)."""
    if inp.gpu_sm is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "needs --gpu", Basis.VERSION)]
    return [judge(inp.gpu_sm, f"the planned GPU (sm_{inp.gpu_sm})")]
