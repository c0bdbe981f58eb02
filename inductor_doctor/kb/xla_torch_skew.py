"""torch_xla built for another torch: `import torch_xla` fails with an undefined symbol in _XLAC.

torch_xla's C++ extension (`_XLAC`) links against libtorch's C++ API, which changes with every
minor release, so a torch_xla wheel works with the torch release it was built with and no other
(pytorch/xla#8292, #8813; marin#731). pip does not prevent the skew: torch_xla 2.9 declares no torch
requirement at all, and a later `pip install torch` (Colab's preinstalled torch, a requirements
file) replaces torch under an installed torch_xla. The versions say it, so the rule needs no canary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import release

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    xla, torch = facts.xla, facts.torch
    if xla is None or not xla.version:
        return one(Status.NOT_APPLICABLE, "torch_xla is not installed")
    if torch is None or not torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    x, t = release(xla.version), release(torch.version)
    if x is None or t is None:
        return one(Status.INCONCLUSIVE,
                   f"cannot compare torch_xla {xla.version!r} with torch {torch.version!r}")
    if (x.major, x.minor) != (t.major, t.minor):
        return one(Status.AFFECTED, f"torch_xla {xla.version} was built for torch {x.major}.{x.minor}, and "
                   f"torch {torch.version} is installed: `import torch_xla` fails with an undefined symbol "
                   "in _XLAC (torch's C++ API changes with every minor release)")
    return one(Status.OK, f"torch_xla {xla.version} and torch {torch.version} are one release")
