"""The cache directories both cache-dir issues judge, as the probe found them for the target.

Rules only read facts: when the facts carry no cache directories (hand-built or old facts), the
rules say so (`inconclusive`) rather than look at the doctor's own environment, which is not
necessarily the target's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import CacheDirInfo, Facts


def cache_dirs(facts: Facts) -> Optional[List[CacheDirInfo]]:
    """Inductor's cache dir always; Triton's own when Triton is installed. None: not probed."""
    info = facts.caches
    if info is None:
        return None
    has_triton = facts.triton is not None and bool(facts.triton.version)
    return [d for d in info.dirs if d.name == "inductor" or (d.name == "triton" and has_triton)]


def judged_cache_dirs(facts: Facts) -> Tuple[List[CacheDirInfo], List[RuleOutcome]]:
    """(the directories to judge, []), or ([], the outcome) where neither cache-dir rule can judge:
    torch is not installed (nothing compiles), or the probe did not look at the directories."""
    if facts.torch is None or not facts.torch.version:
        return [], not_installed("torch")
    dirs = cache_dirs(facts)
    if dirs is None:
        return [], one(Status.INCONCLUSIVE, "the cache directories were not probed")
    return dirs, []


def describe(d: CacheDirInfo) -> str:
    where = f" ({d.fs_type} at {d.mount_point})" if d.mount_point else ""
    return f"{d.name} cache {d.path} [{d.source}]{where}"
