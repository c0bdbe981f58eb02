"""What the Windows issues share: the guard that they apply (a Windows target, torch installed, the
Windows facts probed) and the paths they judge (`PlatformInfo.paths`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple, Union

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, PathFact, WindowsInfo


def windows_facts(facts: Facts, what: str) -> Union[WindowsInfo, List[RuleOutcome]]:
    """The Windows section, or the outcome that says why there is nothing to judge: not Windows
    (`what` says why the issue is Windows' own), no torch, or the section was not probed."""
    system = (facts.python.platform or (facts.platform.system if facts.platform else "") or "").lower()
    if not system.startswith("win"):
        return one(Status.NOT_APPLICABLE, f"{system or 'this platform'} is not Windows: {what}")
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    win = facts.platform.windows if facts.platform is not None else None
    if win is None:
        return one(Status.INCONCLUSIVE, "the Windows facts were not probed (a report from an older doctor?)")
    return win


def path_named(facts: Facts, name: str) -> Optional[PathFact]:
    for p in (facts.platform.paths if facts.platform is not None else []):
        if p.name == name:
            return p
    return None


def cl_version(toolset: Optional[str]) -> Optional[Tuple[int, int]]:
    """The version `cl` reports for a toolset directory: 14.44.35207 -> (19, 44) (VS 2019 and 2022:
    toolset 14.2x-14.4x is cl 19.2x-19.4x)."""
    if not toolset:
        return None
    parts = toolset.split(".")
    try:
        return (19, int(parts[1])) if parts[0] == "14" and len(parts) > 1 else None
    except ValueError:
        return None
