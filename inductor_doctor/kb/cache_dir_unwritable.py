"""The compile cache directory cannot be created or written: PermissionError / read-only FS.

Inductor's default cache, `/tmp/torchinductor_<user>`, and Triton's, `~/.triton/cache`, are
created on first use. On shared machines another account may own the path (or a shared
`/tmp/triton` from an older default), in containers `$HOME` may be `/` or read-only, and a
`TORCHINDUCTOR_CACHE_DIR` may point at a read-only mount: the first compile then stops with
`PermissionError: [Errno 13] Permission denied` or `OSError: [Errno 30] Read-only file system`.
The kernel's own answer (`access(2)`, which honours read-only mounts) makes the rule conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._cache_dirs import describe, judged_cache_dirs
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    dirs, cannot_judge = judged_cache_dirs(facts)
    if cannot_judge:
        return cannot_judge
    bad = [d for d in dirs if d.writable is False]
    if bad:
        return one(Status.AFFECTED, "; ".join(f"{describe(d)}: {d.error or 'not writable'}" for d in bad),
                   paths=[d.path for d in bad])
    unknown = [d for d in dirs if d.writable is None]
    if unknown:
        return one(Status.INCONCLUSIVE, "could not tell whether " + ", ".join(d.path for d in unknown)
                   + " is writable")
    return one(Status.OK, "; ".join(f"{d.name} cache {d.path} is writable" for d in dirs))
