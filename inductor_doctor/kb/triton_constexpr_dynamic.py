"""User @triton.jit kernels under torch.compile(dynamic=True): `NameError: name 's0' is not defined`.

pytorch/pytorch#136504: a `tl.constexpr` parameter that receives a dynamic size is written into
the generated module's `triton_meta` as a bare sympy symbol. Fixed in torch 2.6 by specialising
such arguments while tracing (pytorch/pytorch#136512, `specialize_symbolic`). fla's DeltaNet kernels
hit it (fla-org/flash-linear-attention#160).

The rule reads torch's own source as text (never imports it): the fix is one method name in
`torch/_higher_order_ops/triton_kernel_wrap.py`, which makes the no-GPU verdict conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from packaging.version import Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import torch_source
from inductor_doctor.kb._rules import not_installed, release

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

WRAP_FILE = "_higher_order_ops/triton_kernel_wrap.py"
FIX_MARKER = "specialize_symbolic"
FIXED_IN = Version("2.6")
#: torch.compile traces user-defined Triton kernels from 2.2 on (before, they graph-break).
FIRST_TRACED = Version("2.2")


def rule(facts: Facts) -> List[RuleOutcome]:
    """Conclusive from torch's source where it can be read; a version prediction otherwise."""
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch")
    version = torch.version
    source = torch_source(facts, *WRAP_FILE.split("/"))
    where = f"torch/{WRAP_FILE}"
    if source is not None and FIX_MARKER in source:
        return [RuleOutcome(Status.OK, f"torch {version} specialises tl.constexpr arguments of user Triton "
                            f"kernels (pytorch#136512: `{FIX_MARKER}` in {where})", Basis.STATIC)]
    if source is not None:
        return [RuleOutcome(Status.LIKELY, f"torch {version} lacks the tl.constexpr specialisation of "
                            f"pytorch#136512 (no `{FIX_MARKER}` in {where})", Basis.STATIC)]
    rel = release(version)
    if rel is not None and rel < FIRST_TRACED:
        return [RuleOutcome(Status.NOT_APPLICABLE, f"torch {version} does not trace user-defined Triton "
                            "kernels (support arrived in 2.2), so it cannot hit this", Basis.VERSION)]
    if rel is not None and rel < FIXED_IN:
        return [RuleOutcome(Status.LIKELY, f"torch {version} predates the fix (torch 2.6)", Basis.VERSION)]
    return [RuleOutcome(Status.INCONCLUSIVE, f"could not read {where} to confirm the fix in torch {version}",
                        Basis.STATIC)]
