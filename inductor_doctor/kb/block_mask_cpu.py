"""torch.compile(create_block_mask) on CPU: Inductor's C++ fails with "conflicting declaration".

A regression of the torch 2.8.0 nightlies of April 2025 that showed on one CI runner image only
(pytorch/pytorch#151290), fixed by pytorch/pytorch#151887. Host-dependent, so versions can only
predict it; the canary (the upstream unit test, ~30 s of CPU compile) decides. Release wheels do
not reproduce it (2.7.0 and 2.8.0 were tried with g++ 11/12 and clang 16).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._builtin import issue_data, known_issue
from inductor_doctor.kb._rules import nightly_window, not_installed, parse_version

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: The nightlies that may carry the regression: the data file's `affected` range, which says why.
FIRST_NIGHTLY, FIXED_NIGHTLY = nightly_window(issue_data(__name__)["affected"]["torch"])


def nightly_date(version: Optional[str]) -> Optional[int]:
    """`2.8.0.dev20250410+cu128` → 20250410; None for a release or a source build."""
    v = parse_version(version)
    dev = v.dev if v is not None else None
    return dev if dev is not None and dev > 20000000 else None


def rule(facts: Facts) -> List[RuleOutcome]:
    """A prediction from the torch version alone; the canary is what decides."""
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch")
    version = torch.version
    date = nightly_date(version)
    if date is None:
        try:
            release = Version(version).release[:2]
        except InvalidVersion:
            release = ()
        if release == (2, 8) and Version(version).is_prerelease:
            return [RuleOutcome(Status.INCONCLUSIVE, f"torch {version} is a 2.8 pre-release of unknown "
                                "date: the regression was in 2.8.0 nightlies of April 2025", Basis.VERSION)]
        return [RuleOutcome(Status.OK, f"torch {version} is not a 2.8.0 nightly of April 2025 (the only "
                            "builds known to hit pytorch#151290)", Basis.VERSION)]
    if FIRST_NIGHTLY <= date < FIXED_NIGHTLY:
        return [RuleOutcome(Status.LIKELY, f"torch {version} is a nightly from before pytorch#151887 "
                            "(2025-04-23); the bug showed only on some hosts", Basis.VERSION)]
    return [RuleOutcome(Status.OK, f"torch {version} is a nightly outside the affected window "
                        "(2025-04 before the 23rd)", Basis.VERSION)]


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan`: the nightly window, but never more than `likely`: the bug showed on some hosts only."""
    from inductor_doctor.core.plan_input import predict_from_versions

    out = []
    for o in predict_from_versions(inp, ISSUE):
        if o.status is Status.AFFECTED:
            o = RuleOutcome(Status.LIKELY, o.reason + "; it failed on some hosts only", o.basis)
        out.append(o)
    return out


ISSUE = known_issue(__name__)
