"""The cache directories both cache-dir issues judge: the probe's, or looked up here.

`probe.caches.gather_caches` is cheap and reads only the environment and /proc/self/mounts, so when
a caller's Facts lack them (older cached facts, hand-built facts) the rule looks itself, with the
doctor's own environment, which is also the one canaries and the user's process inherit.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.probe.facts import CacheDirInfo, Facts


def cache_dirs(facts: Facts) -> List[CacheDirInfo]:
    """Inductor's cache dir always; Triton's own cache dir when Triton is installed."""
    info = facts.caches
    if info is None:
        from inductor_doctor.probe.caches import gather_caches

        env = dict(os.environ)
        env.update(facts.env)
        info = gather_caches(env)
    has_triton = facts.triton is not None and bool(facts.triton.version)
    return [d for d in info.dirs if d.name == "inductor" or (d.name == "triton" and has_triton)]


def describe(d: CacheDirInfo) -> str:
    where = f" ({d.fs_type} at {d.mount_point})" if d.mount_point else ""
    return f"{d.name} cache {d.path} [{d.source}]{where}"
