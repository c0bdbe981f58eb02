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

from inductor_doctor.core.model import (
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


ISSUE = KnownIssue(
    id="triton-constexpr-dynamic",
    title="User Triton kernel, tl.constexpr size, dynamic shapes: NameError: name 's0' is not defined",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "pytorch/pytorch#136504",
        "pytorch/pytorch#136512",
        "fla-org/flash-linear-attention#160",
    ),
    aliases=("constexpr-dynamic", "user-triton-constexpr"),
    summary=(
        "Calling a user-defined @triton.jit kernel inside torch.compile with dynamic shapes "
        "(dynamic=True, automatic dynamic on the second shape, or mark_dynamic) passes a SymInt to a "
        "tl.constexpr parameter; torch <= 2.5 writes it into the generated module as a bare name and "
        "compilation fails with NameError: name 's0' is not defined. Fixed in torch 2.6."
    ),
    affected={"torch": ">=2.2,<2.6"},
    fixed={"torch": "2.6.0"},
    signatures=(
        Signature(r"NameError: name '[su]\d+' is not defined",
                  note="the symbol's number varies: s0 upstream, s2 in fla#160, s77 on torch 2.11",
                  # pytorch#108014: a size symbol missing from Inductor's own wrapper, in its
                  # assert_size_stride line: the same NameError, another bug.
                  unless=r"assert_size_stride\(",
                  # Inductor's own kernels (triton_poi_fused_*, FlexAttention's template, a wrapper
                  # that lost an unbacked u0) print the same NameError: only a user's kernel is this.
                  anchor=r"triton_meta|'constants': \{|triton_kernel_wrap|@triton\.jit|tl\.constexpr"
                         r"|user[- ]defined triton|\bfla[./]ops\b",
                  anchor_says="a user @triton.jit kernel (its tl.constexpr in triton_meta's constants)"),
        Signature(r"'constants': \{[^}]*: [su]\d+[,}]", strength="partial",
                  note="a sympy symbol among triton_meta's constants in the generated module"),
    ),
    workarounds=(
        Workaround("Upgrade torch: 2.6 specialises tl.constexpr arguments while tracing",
                   "pip install 'torch>=2.6'", "upgrade"),
        Workaround("Compile with static shapes: torch.compile(fn, dynamic=False), or "
                   "torch._dynamo.mark_static(x) on the inputs whose sizes reach the constexpr",
                   None, "code"),
        Workaround("Keep the Triton-calling function out of the graph with @torch.compiler.disable "
                   "(what fla did for fused_recurrent, commit f211b8eb)", None, "code"),
        Workaround("Make size arguments runtime arguments instead of tl.constexpr "
                   "(@triton.jit(do_not_specialize=['T']), as fla did in ea6c113b)", None, "code"),
        Workaround("fla users: upgrade flash-linear-attention (the fixes shipped in fla v0.1.0)",
                   "pip install --upgrade flash-linear-attention", "upgrade"),
    ),
    rule=rule,
    canary=Canary(
        "triton_constexpr_dynamic.py",
        devices=(DeviceKind.CUDA,),
        needs=("torch", "triton"),
        timeout_s=180.0,
    ),
)
