"""The compile cache sits on a `noexec` mount: "failed to map segment from shared object".

Inductor writes each compiled kernel (a shared object) under its cache directory, by default
`/tmp/torchinductor_<user>`, and `dlopen`s it; Triton does the same with its launcher
(`cuda_utils.so`). Hardened hosts and some container runtimes mount `/tmp` with `noexec`, and the
kernel then refuses to map the code: every compile fails although it built fine. The mount options
of the directory are a plain fact (/proc/self/mounts), so the rule is conclusive.
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
    bad = [d for d in dirs if "noexec" in d.mount_options]
    if bad:
        return one(Status.AFFECTED, "; ".join(describe(d) for d in bad) + " is mounted noexec: compiled "
                   "kernels cannot be loaded from it", paths=[d.path for d in bad])
    unknown = [d for d in dirs if d.mount_point is None]
    if unknown:
        return one(Status.INCONCLUSIVE, "mount options unknown for " + ", ".join(d.path for d in unknown))
    return one(Status.OK, "; ".join(f"{d.name} cache {d.path} ({d.fs_type}, exec allowed)" for d in dirs))
