"""A setting makes torch.compile a no-op, fall back to eager when it fails, or run another backend.

`TORCH_COMPILE_DISABLE=1`, `TORCHDYNAMO_DISABLE=1`, `TORCHDYNAMO_SUPPRESS_ERRORS`, a backend override
(`TORCH_COMPILE_OVERRIDE_BACKENDS`, `TORCH_BISECT_BACKEND`), `TRITON_INTERPRET=1`, the same config
set by a sitecustomize, or `torch.compile` replaced at start-up: the program runs, and nothing it
asks to compile is compiled (or a failure is swallowed). Nothing fails, so nothing says so; every
`ok` of a check run in that environment would be hollow. The canaries run with these settings set
aside (target/harness.py), so they still test the stack; this finding says the setting is there,
from where, and what the installed torch does with it (probe/compile_settings.py reads that from
the release's own code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.envvars import BYPASS_EFFECTS
from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    info = facts.compile_settings
    if info is None:
        return one(Status.INCONCLUSIVE, "the compile settings were not read (facts from an older doctor)")
    if not info.found and info.startup and not facts.live:
        lines = "; ".join(f"{ln.path}:{ln.line}: {ln.text}" for ln in info.startup[:3])
        return one(Status.LIKELY, f"a file Python runs at start-up names such a setting ({lines}); only a "
                   "live probe (not run with --static) can tell whether it takes effect")
    if not info.found:
        said = "; ".join(info.notes)
        return one(Status.OK, "no setting turns torch.compile off, swallows its errors or swaps its backend"
                   + (f" ({said})" if said else ""))
    parts = [f"{s.setting} ({s.source}): {BYPASS_EFFECTS.get(s.effect, s.effect)}" for s in info.found]
    how = "; ".join(s.how for s in info.found if s.how)
    return one(Status.AFFECTED, "; ".join(parts) + (f" [{how}]" if how else "")
               + ". The canaries ran with it set aside; your programs do not")
