"""A CompilerBisector state left in the Inductor cache: torch.compile silently runs the bisector's backend.

From torch 2.6, `torch.compile` asks `CompilerBisector.get_backend()` on every call: the
`TORCH_BISECT_BACKEND` variable, else `backend=` in `<inductor cache>/bisect/bisect_status.txt`;
whatever it names replaces the backend the program asked for (torch/__init__.py). The file stays
until `python -m torch._inductor.compiler_bisector end` or a bisection that finishes
(pytorch/pytorch#143453). The probe reads it (probe/bisect_state.py); which releases read it, and
where they keep it, is read from each release (core/source_history.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core import source_history as history
from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    release = history.release_of(t.version)
    known = history.bisector(release)
    newest = history.torch_releases()[-1]
    if known is not None:
        reads = bool(known.get("compile_reads"))
    else:  # a release the history has no bisector for: older ones have none, a newer one is assumed to
        reads = release is not None and history.covers([["2.6.0", newest]], release, newest) is None
    if not reads:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)}'s torch.compile does not take its backend "
                   "from a CompilerBisector state (torch 2.6 and later do)")
    env = facts.env.get("TORCH_BISECT_BACKEND")
    state = facts.bisect
    if env:
        return one(Status.AFFECTED, f"TORCH_BISECT_BACKEND={env} is set: every torch.compile here runs the "
                   f"'{env}' backend, whatever the program asks for", Basis.STATIC, variable=env)
    if state is None:
        return one(Status.INCONCLUSIVE, "the Inductor cache directory is not known, so its bisector state "
                   "was not read")
    if state.backend:
        sub = f", with its {state.subsystem} subsystem disabled" if state.subsystem else ""
        when = f", written {state.modified}" if state.modified else ""
        return one(Status.AFFECTED, f"a CompilerBisector state is left in the Inductor cache "
                   f"({state.status_file}{when}): every torch.compile that uses this cache runs the "
                   f"'{state.backend}' backend{sub}, silently", Basis.STATIC, directory=state.directory,
                   backend=state.backend)
    if state.exists:
        return one(Status.OK, f"{state.directory} holds no bisection status (a finished or reset "
                   "bisection's files): torch.compile keeps the backend it is given")
    return one(Status.OK, f"no CompilerBisector state in the Inductor cache ({state.directory} is not there)")


def advise(facts: Facts) -> List[Workaround]:
    state = facts.bisect
    if state is None or not state.exists:
        return list(ISSUE_WORKAROUNDS)
    first = Workaround("Remove the bisector's state directory", f"rm -rf '{state.directory}'", "other")
    return list(Workaround.pick(ISSUE_WORKAROUNDS, first, drop=["rm -rf \"${TORCHINDUCTOR_CACHE_DIR"]))


ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
