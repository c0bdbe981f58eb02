"""No torch to check: not installed for this interpreter, or installed but `import torch` fails.

Everything else the doctor says depends on a torch being there, so this is said first. Without one
every other row is `not-applicable` — which, shown alone, reads like health. A doctor pointed at the
wrong interpreter (a system Python beside the venv that runs the code, `pip` and `python` from two
environments) must say "nothing to check here", and a gate must be able to fail on it: the finding
is `inconclusive` (`--fail-on inconclusive`). A torch whose import fails is a finding of its own
(`affected`, with the error the live probe saw).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import once_installed, unpredictable
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput


def rule(facts: Facts) -> List[RuleOutcome]:
    where = facts.python.executable
    torch = facts.torch
    if torch is None or not torch.version:
        return one(Status.INCONCLUSIVE, f"torch is not installed for {where}: nothing of the compile stack "
                   "to check here — diagnose the interpreter that runs your code with `--python`, or "
                   "predict an install with `plan`")
    if torch.import_ok is False:
        why = (torch.import_error or "unknown error").strip().splitlines()[0][:300]
        return one(Status.AFFECTED, f"torch {torch.version} is installed for {where}, but `import torch` "
                   f"fails: {why}")
    tried = "imports" if torch.import_ok else "is installed (its import is tried without --static)"
    return one(Status.OK, f"torch {torch.version} {tried} ({torch.path})")


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan`: a plan that installs torch cannot leave the interpreter without it."""
    if inp.package("torch") is not None:
        return one(Status.NOT_APPLICABLE, "the plan installs torch", Basis.VERSION)
    return unpredictable("torch is not in the plan: whether the interpreter has one is the machine's",
                         once_installed("torch-missing"))
