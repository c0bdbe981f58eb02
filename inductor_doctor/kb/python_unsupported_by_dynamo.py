"""The Python is newer than this torch's Dynamo supports: "Dynamo is not supported on Python 3.12+".

Dynamo rewrites CPython bytecode, so each torch release supports the Python versions whose
bytecode it knows and refuses newer ones in `torch.compile` itself: `torch/__init__.py`, and
`check_if_dynamo_supported` in `torch/_dynamo/eval_frame.py` (torch 2.0 has only the latter, and
refuses 3.11). From the wheels: 3.11+ in 2.0, 3.12+ in 2.1-2.3, 3.13+ in 2.4-2.5, 3.14+ in 2.6-2.9,
3.15+ in 2.10-2.14, 3.16+ in 2.15; free-threaded (GIL-disabled) builds always in 2.6-2.7 and
below CPython 3.13.3 from 2.8. torch wheels exist for Pythons that Dynamo does not support yet
(2.9 ships 3.14 wheels), so the install succeeds and only the compile fails. The rule reads the
refusal from torch's own source, so it is exact for any build; the release snapshot
(`core/_data/releases.json`) answers for a torch whose files are unreadable, and for `plan`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_source, version_tuple
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

_MAX = re.compile(
    r"if sys\.version_info >= \((\d+),\s*(\d+)\):\s*"
    r"raise RuntimeError\(\s*\"([^\"]*not (?:yet )?supported[^\"]*)\""
)
_GIL = re.compile(
    r"Py_GIL_DISABLED\"\)\s*==\s*1(?P<cond>\s*and\s*sys\.version_info\s*<\s*\(\s*(?P<a>\d+),\s*(?P<b>\d+),"
    r"\s*(?P<c>\d+),?\s*\))?\s*:\s*raise RuntimeError\(\s*\"(?P<msg>[^\"]*)\""
)

def refusal(facts: Facts) -> Optional[Tuple[Tuple[int, int], str]]:
    """(first refused Python, torch's message) from torch/__init__.py and _dynamo/eval_frame.py
    (the lower of the two, as torch.compile reaches both); None when neither is readable."""
    found = []
    for parts in (("__init__.py",), ("_dynamo", "eval_frame.py")):
        for m in _MAX.finditer(torch_source(facts, *parts) or ""):
            found.append(((int(m.group(1)), int(m.group(2))), len(found), m.group(3)))
    if not found:
        return None
    first, _, message = min(found)
    return first, message


def gil_floor(facts: Facts) -> Optional[Tuple[Optional[Tuple[int, int, int]], str]]:
    """For free-threaded Pythons: (oldest CPython allowed, or None for never, torch's message)."""
    for parts in (("__init__.py",), ("_dynamo", "eval_frame.py")):
        m = _GIL.search(torch_source(facts, *parts) or "")
        if m:
            floor = (int(m.group("a")), int(m.group("b")), int(m.group("c"))) if m.group("cond") else None
            return floor, m.group("msg").strip()
    return None


def _parse_gate(gate: Optional[str]) -> Optional[Tuple[int, int, int]]:
    """`<3.13.3` -> (3, 13, 3); `always` -> None (no CPython is allowed)."""
    if not gate or not gate.startswith("<"):
        return None
    major, minor, micro = (int(x) for x in gate[1:].split("."))
    return major, minor, micro


def from_snapshot(torch_version: Optional[str]) -> Optional[Dict[str, Any]]:
    """What the release snapshot read from this torch release (or its nearest release)."""
    from inductor_doctor.core.releases import torch_release

    found = torch_release(torch_version)
    if found is None:
        return None
    release, entry = found
    refuses = entry["dynamo_refuses"]
    first = tuple(int(x) for x in refuses["python"].split("."))
    gate = entry.get("free_threaded")
    return {"release": release, "first": first, "message": refuses["message"], "file": refuses["file"],
            "gil": (gate["refused"], gate["message"]) if gate else None, "pythons": entry.get("pythons", [])}


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
    snap = None
    if found is None:
        snap = from_snapshot(tv)
        if snap is None:
            return one(Status.INCONCLUSIVE, f"could not read torch {tv}'s supported Python range")
        first, message, basis = snap["first"], snap["message"], Basis.VERSION
    else:
        first, message = found
    if py[:2] >= first:
        return one(Status.AFFECTED, f"torch {tv} refuses Python {pyv} in torch.compile: \"{message}\"",
                   basis, python=pyv, first_refused=f"{first[0]}.{first[1]}")
    free_threaded = bool(facts.python.gil_disabled) or "t" in (facts.python.abiflags or "")
    if free_threaded:
        gil = gil_floor(facts) if snap is None else None
        if snap is not None and snap["gil"] is not None:
            gate, msg = snap["gil"]
            gil = (_parse_gate(gate), msg)
        if gil is not None:
            floor, msg = gil
            if floor is None or py < floor:
                return one(Status.AFFECTED, f"torch {tv} refuses this free-threaded Python {pyv}: \"{msg}\"",
                           basis, python=pyv)
    return one(Status.OK, f"torch {tv} compiles on Python {pyv} (it refuses {first[0]}.{first[1]}+)", basis)


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --python-version 3.14 torch==2.11.0`: each planned torch release's refusal, as the
    release snapshot read it from the wheel, against the planned Python (and its build)."""
    torch = inp.package("torch")
    if torch is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not in the plan", Basis.VERSION)]
    if not torch.version_known:
        return [RuleOutcome(Status.INCONCLUSIVE, f"the version of {torch.describe()} is known only once "
                            "installed", Basis.VERSION)]
    py = inp.python
    full = tuple(int(x) for x in inp.python_version.split(".")[:3])
    shown = inp.python_version + ("t" if inp.free_threaded else "")
    refused, maybe, fine, unknown = [], [], [], []
    for version in torch.candidates:
        snap = from_snapshot(version)
        if snap is None:
            unknown.append(version)
            continue
        first = snap["first"]
        wheels = f"; it ships Python {py[0]}.{py[1]} wheels" if f"{py[0]}.{py[1]}" in snap["pythons"] else ""
        if py >= first:
            refused.append(f"torch {version} refuses Python {first[0]}.{first[1]}+ in torch.compile "
                           f"(\"{snap['message']}\", {snap['file']}){wheels}")
        elif inp.free_threaded and snap["gil"] is not None:
            gate, msg = snap["gil"]
            floor = _parse_gate(gate)
            if floor is None or (len(full) == 3 and full < floor):
                refused.append(f"torch {version} refuses free-threaded Python {shown}: \"{msg}\"")
            elif len(full) < 3 and py == floor[:2]:
                maybe.append(f"torch {version} refuses free-threaded Python {py[0]}.{py[1]} below "
                             f"{'.'.join(map(str, floor))}; pass the patch release to decide")
            else:
                fine.append(version)
        else:
            fine.append(version)
    if refused and not fine and not maybe and not unknown:
        return [RuleOutcome(Status.AFFECTED, refused[0], Basis.VERSION)]
    if refused or maybe:
        more = f" (and {', '.join(fine[:3])} not)" if fine else ""
        return [RuleOutcome(Status.LIKELY, (refused or maybe)[0] + more, Basis.VERSION)]
    if unknown:
        return [RuleOutcome(Status.INCONCLUSIVE, f"torch {', '.join(unknown[:3])} is not in the release "
                            "snapshot; run `inductor-doctor check` once installed", Basis.VERSION)]
    return [RuleOutcome(Status.OK, f"the planned torch ({torch.describe()}) compiles on Python {shown}",
                        Basis.VERSION)]
