"""The Python is newer than this torch's Dynamo supports: "Dynamo is not supported on Python 3.12+".

Dynamo rewrites CPython bytecode, so each torch release supports the Python versions whose
bytecode it knows and refuses newer ones in `torch.compile` itself (`torch/__init__.py`): 3.12+
before torch 2.4, 3.13+ before 2.6, 3.14+ up to 2.9, and free-threaded (GIL-disabled) builds
before 2.6, or below CPython 3.13.3. torch wheels exist for Pythons that Dynamo does not support
yet, so the install succeeds and only the compile fails. The rule reads the refusal from torch's
own source, so it is exact for any build; a release table covers a torch whose files are unreadable.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.kb._catalog import one, torch_source, version_tuple
from inductor_doctor.kb._rules import not_installed, parse_version
from inductor_doctor.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.plan.inputs import PlanInput
    from inductor_doctor.probe.facts import Facts

_MAX = re.compile(
    r"if sys\.version_info >= \((\d+),\s*(\d+)\):\s*"
    r"raise RuntimeError\(\s*\"([^\"]*not (?:yet )?supported[^\"]*)\""
)
_GIL = re.compile(
    r"Py_GIL_DISABLED\"\)\s*==\s*1(?P<cond>\s*and\s*sys\.version_info\s*<\s*\(\s*(?P<a>\d+),\s*(?P<b>\d+),"
    r"\s*(?P<c>\d+),?\s*\))?\s*:\s*raise RuntimeError\(\s*\"(?P<msg>[^\"]*)\""
)

#: First unsupported Python per torch release line, where torch's files cannot be read (verified on
#: the 2.3.1, 2.5.1, 2.6.0, 2.9.0 and 2.13.0 wheels; 2.10-2.12 are not in the table).
TABLE: Tuple[Tuple[Tuple[int, int], Tuple[int, int]], ...] = (
    ((2, 4), (3, 12)), ((2, 6), (3, 13)), ((2, 10), (3, 14)),
)  # (first torch release *not* in the row, first refused Python) for torch below that release


def refusal(facts: Facts) -> Optional[Tuple[Tuple[int, int], str]]:
    """(first refused Python, torch's message), from torch/__init__.py; None when unreadable."""
    text = torch_source(facts, "__init__.py")
    m = _MAX.search(text or "")
    if m:
        return (int(m.group(1)), int(m.group(2))), m.group(3)
    return None


def gil_floor(facts: Facts) -> Optional[Tuple[Optional[Tuple[int, int, int]], str]]:
    """For free-threaded Pythons: (oldest CPython allowed, or None for never, torch's message)."""
    m = _GIL.search(torch_source(facts, "__init__.py") or "")
    if not m:
        return None
    floor = (int(m.group("a")), int(m.group("b")), int(m.group("c"))) if m.group("cond") else None
    return floor, m.group("msg").strip()


def _table(torch_version: Optional[str]) -> Optional[Tuple[int, int]]:
    v = parse_version(torch_version)
    if v is None:
        return None
    for below, first_refused in TABLE:
        if v.release[:2] < below:
            return first_refused
    if v.release[:2] == (2, 13):
        return (3, 15)
    return None


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    py = version_tuple(facts.python.version, 3)
    if py is None:
        return one(Status.INCONCLUSIVE, "the target Python's version is unknown")
    pyv = ".".join(str(x) for x in py)
    tv = facts.torch.version
    found = refusal(facts)
    basis = Basis.STATIC
    if found is None:
        first = _table(tv)
        if first is None:
            return one(Status.INCONCLUSIVE, f"could not read torch {tv}'s supported Python range")
        message, basis = f"Dynamo is not supported on Python {first[0]}.{first[1]}+", Basis.VERSION
    else:
        first, message = found
    if py[:2] >= first:
        return one(Status.AFFECTED, f"torch {tv} refuses Python {pyv} in torch.compile: \"{message}\"",
                   basis, python=pyv, first_refused=f"{first[0]}.{first[1]}")
    free_threaded = bool(facts.python.gil_disabled) or "t" in (facts.python.abiflags or "")
    if free_threaded:
        gil = gil_floor(facts)
        if gil is not None:
            floor, msg = gil
            if floor is None or py < floor:
                return one(Status.AFFECTED, f"torch {tv} refuses this free-threaded Python {pyv}: \"{msg}\"",
                           python=pyv)
    return one(Status.OK, f"torch {tv} compiles on Python {pyv} (it refuses {first[0]}.{first[1]}+)", basis)


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --python-version`: the release table against the planned torch versions."""
    py = inp.python
    refused_below = [below for below, first in TABLE if py >= first]
    if inp.package("torch") is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not in the plan", Basis.VERSION)]
    if not refused_below:
        if py >= (3, 15):
            return [RuleOutcome(Status.LIKELY, f"Python {py[0]}.{py[1]} is newer than any torch the "
                                "doctor knows supports in torch.compile", Basis.VERSION)]
        return [RuleOutcome(Status.OK, f"Python {py[0]}.{py[1]} is supported by torch.compile since "
                            "torch 2.4 at the latest", Basis.VERSION)]
    below = max(refused_below)
    spec = f"<{below[0]}.{below[1]}"
    judged = inp.judge("torch", spec)
    if judged.share in ("all", "some"):
        return [RuleOutcome(judged.status, f"torch{spec} refuses Python {py[0]}.{py[1]} in torch.compile "
                            f"(planned: {inp.package('torch').describe()})", Basis.VERSION)]
    if py >= (3, 14) and inp.judge("torch", "<2.13").share in ("all", "some"):
        return [RuleOutcome(Status.INCONCLUSIVE, "whether torch 2.10-2.12 support Python 3.14 in "
                            "torch.compile is not in the doctor's table", Basis.VERSION)]
    return [RuleOutcome(judged.status, f"the planned torch supports Python {py[0]}.{py[1]}", Basis.VERSION)]


ISSUE = KnownIssue(
    id="python-unsupported-by-dynamo",
    title="Python newer than this torch's Dynamo supports: \"Dynamo is not supported on Python 3.12+\"",
    severity=Severity.ERROR,
    devices=(DeviceKind.TOOLCHAIN,),
    upstream=(
        "pytorch/pytorch#120233",
        "pytorch/pytorch#144048",
        "pytorch/pytorch#149549",
        "pytorch/pytorch#123216",
    ),
    aliases=("dynamo-python-version", "python-3.12", "python-3.13", "free-threaded"),
    summary=(
        "Dynamo works on CPython bytecode and supports only the Python versions each torch release "
        "knows: torch.compile raises `RuntimeError: Dynamo is not supported on Python 3.12+` on torch "
        "< 2.4, `... 3.13+` on torch < 2.6, `torch.compile is not supported on Python 3.14+` on torch "
        "2.6-2.9, and refuses free-threaded (3.13t) builds before torch 2.6 and below CPython 3.13.3. "
        "pip installs torch on those Pythons all the same; only the compile fails."
    ),
    signatures=(
        Signature(r"Dynamo is not supported on Python 3\.\d+\+"),
        Signature(r"torch\.compile is not supported on Python (?:3\.\d+\+|< ?3\.\d+\.\d+ built with GIL)"),
        Signature(r"Python 3\.\d+\+ not yet supported for torch\.compile",
                  note="torch/_dynamo/eval_frame.py"),
        Signature(r"torch\.compile is not supported on Python built with GIL disabled"),
    ),
    workarounds=(
        Workaround("Upgrade torch to a release whose Dynamo supports this Python (3.12: torch >= 2.4, "
                   "3.13: >= 2.6)", 'pip install -U "torch>=2.6"', "upgrade"),
        Workaround("Or run on an older Python (a venv with python3.11, for example)", None, "other"),
    ),
    rule=rule,
    predict=predict,
)
