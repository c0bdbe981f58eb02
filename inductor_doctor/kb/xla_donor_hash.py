"""PyTorch/XLA: the graph hash ignores buffer-donor indices, so graphs share a wrong executable.

pytorch/xla#8464: an in-place step and an IR-identical out-of-place step hash alike, the second
reuses the first's executable and donates (frees) a buffer still in use: wrong values (`t1=4`) on
some plugins, an abort on PJRT CPU. Fixed by pytorch/xla#8467, in torch_xla 2.6.0.

The canary also re-runs the steps with XLA_ENABLE_PARAM_ALIASING=0 when they show the bug, so an
`affected` finding says whether the workaround holds on this machine.
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
from inductor_doctor.kb._rules import not_installed, release

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

FIXED_IN = Version("2.6")
WORKAROUND_ENV = "XLA_ENABLE_PARAM_ALIASING"


def rule(facts: Facts) -> List[RuleOutcome]:
    """A version prediction; the canary decides wherever torch_xla is installed."""
    xla = facts.xla
    version = xla.version if xla is not None else None
    if not version:
        return not_installed("torch_xla")
    rel = release(version)
    if rel is None:
        return [RuleOutcome(Status.INCONCLUSIVE, f"cannot parse the torch_xla version {version!r}",
                            Basis.VERSION, device="xla")]
    if rel >= FIXED_IN:
        return [RuleOutcome(Status.OK, f"torch_xla {version} hashes buffer-donor indices (pytorch/xla#8467, "
                            "in 2.6.0)", Basis.VERSION, device="xla")]
    reason = f"torch_xla {version} predates pytorch/xla#8467 (fixed in 2.6.0)"
    if facts.env.get(WORKAROUND_ENV) == "0":
        # The documented workaround is in effect: no aliasing, no donation, nothing to share wrongly
        # (the canary, where it runs, confirms it with the steps themselves).
        return [RuleOutcome(Status.OK, f"{reason}, but {WORKAROUND_ENV}=0 is set here, which avoids it",
                            Basis.VERSION, device="xla")]
    return [RuleOutcome(Status.LIKELY, reason, Basis.VERSION, device="xla")]


ISSUE = KnownIssue(
    id="xla-donor-hash",
    title="torch_xla: graph hash ignores buffer donors; in-place and out-of-place steps share an executable",
    severity=Severity.ERROR,
    devices=(DeviceKind.XLA,),
    upstream=("pytorch/xla#8464", "pytorch/xla#8467"),
    aliases=("buffer-donor-hash", "xla-param-aliasing"),
    summary=(
        "torch_xla <= 2.5 computed the graph hash before the buffer-donor indices, so a graph with "
        "an in-place update and an IR-identical out-of-place graph shared one cached executable "
        "that donated an input still in use: wrong results (t1=4 instead of 3) or an abort "
        "(\"CopyToHostAsync() called on deleted or donated buffer\"). Fixed in torch_xla 2.6.0."
    ),
    affected={"torch-xla": "<2.6"},
    fixed={"torch-xla": "2.6.0"},
    signatures=(
        Signature(r"called on deleted or donated buffer", note="PJRT's status text, in the fatal log line"),
        Signature(r"Results: t1=4\b", note="the upstream reproducer's wrong output (t1 must be 3)"),
        Signature(r"\bt1=4\b", strength="partial"),
    ),
    workarounds=(
        Workaround("Switch off input/output parameter aliasing (the canary re-runs with it to confirm)",
                   f"export {WORKAROUND_ENV}=0", "env"),
        Workaround("Upgrade torch_xla and torch together, as an exact pair of one release (2.6.0 or later; "
                   "torch_xla 2.9 declares no torch requirement, so `torch_xla>=2.6 torch>=2.6` resolves to "
                   "torch_xla 2.9.0 with whatever torch is newest)",
                   "pip install 'torch==2.6.0' 'torch_xla==2.6.0'", "upgrade"),
    ),
    rule=rule,
    canary=Canary(
        "xla_donor_hash.py",
        devices=(DeviceKind.XLA,),
        needs=("torch", "torch_xla"),
        # Each run of the steps is one interpreter (~12-17 s on 2 shared cores, mostly the import).
        timeout_s=300.0,
    ),
)
