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

from inductor_doctor.core.model import Basis, RuleOutcome, Status
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
