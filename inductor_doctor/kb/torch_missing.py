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

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


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
