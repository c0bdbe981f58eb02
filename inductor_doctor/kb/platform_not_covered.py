"""A platform the doctor's checks were not all written for: Windows, macOS, a ROCm or an XPU build.

Most rules read a Linux toolchain and NVIDIA's stack. On another platform this issue says, before
the matrix, what the matrix stands on there, row by row (kb/_platforms.py): which rows a rule decides
from this platform's own facts, which a canary decides where it runs, which are not checked at all
(those rows say `inconclusive`, "not checked on <platform>", never `ok`) and which cannot arise; and
the areas of the platform no row covers. It is `inconclusive` there (could not check everything is
never ok), and `ok` on Linux with a CUDA or CPU build of torch, the platform the checks are written
for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence

from inductor_doctor.core.model import DeviceKind, RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._platforms import (
    CANARY,
    CANNOT_ARISE,
    LINUX,
    NOT_CHECKED,
    RULE,
    UNCOVERED,
    Row,
    coverage,
    platforms_of,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def _issues() -> Dict[str, Sequence[DeviceKind]]:
    """Every built-in issue with a row in `check` (the artifact issues have rows only per artifact)."""
    from inductor_doctor.kb import registry
    from inductor_doctor.kb._artifacts import artifact_only

    return {i.id: i.devices for i in registry() if i.source == "builtin" and not artifact_only(i)}


def _ids(rows: List[Row]) -> str:
    return ", ".join(r.issue for r in rows) or "none"


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    found, how = platforms_of(facts)
    if not found:
        torch = facts.torch
        build = f"CUDA {torch.cuda}" if torch.cuda else "CPU"
        return one(Status.OK, f"Linux, torch {torch.version} ({build} build): the platform the checks are "
                   "written for")
    rows = coverage(facts, _issues())
    areas = [a for p in found for a in UNCOVERED.get(p, ())]
    evidence = [
        f"decided by a rule that reads {'/'.join(found)}: {_ids(rows[RULE])}",
        f"decided by a canary where it runs: {_ids(rows[CANARY])}",
        *([f"decided as on any Linux machine: {_ids(rows[LINUX])}"] if rows[LINUX] else []),
        f"not checked (each says why in its row): {_ids(rows[NOT_CHECKED])}",
        f"cannot arise here: {_ids(rows[CANNOT_ARISE])}",
        *(f"no row covers {a}" for a in areas),
    ]
    linux = f", {len(rows[LINUX])} as on any Linux machine" if rows[LINUX] else ""
    reason = (f"{how}: a platform inductor-doctor does not cover whole. {len(rows[NOT_CHECKED])} rows are "
              f"not checked here ({_ids(rows[NOT_CHECKED])}); {len(rows[RULE])} are decided by a rule that "
              f"reads it, {len(rows[CANARY])} by a canary where it runs{linux}; no row covers "
              f"{'; '.join(areas) or 'nothing else'}. An ok row is about what it read, not a clean bill of "
              "health")
    return one(Status.INCONCLUSIVE, reason, platforms=found, evidence=evidence)
