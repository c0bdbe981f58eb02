"""The `resources` step: the CPUs and memory this process may use, and how many ranks share them.

torch sizes Inductor's compile workers by the CPUs the process may run on (its affinity), capped
at 32 (`decide_compile_threads`, read from each release: core/_data/releases.json). A container's
CPU quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) does not shrink the
affinity, so a container limited to 4 CPUs on a 192-CPU host starts 32 workers per rank
(pytorch/pytorch#191385); and every local rank starts its own. So the step reads, without running
anything: the host's CPU count, the affinity, the tightest CPU quota and memory limit of this
process's cgroup and its ancestors, the memory the kernel reports, and the local ranks a launcher
announced (`LOCAL_WORLD_SIZE` from torchrun, `SLURM_NTASKS_PER_NODE`).
"""

from __future__ import annotations

import os
from typing import List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import ResourceInfo
from inductor_doctor.probe.step import Step

CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"
MEMINFO = "/proc/meminfo"
#: A v1 memory limit at or above this is "no limit" (the kernel's PAGE_COUNTER_MAX, page-rounded).
V1_UNLIMITED = 1 << 60


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _memberships(text: str) -> List[Tuple[str, str]]:
    """(controllers, path) per line of /proc/self/cgroup: `("", "/")` is the v2 hierarchy."""
    out = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            out.append((parts[1], parts[2] or "/"))
    return out


def _ancestors(mount: str, path: str) -> List[str]:
    """The cgroup's directory and each parent's up to the mount, deepest first. A container sees
    its own cgroup as its root, where /proc/self/cgroup may name a path its mount does not have."""
    dirs = []
    rel = path.strip("/")
    while True:
        candidate = os.path.join(mount, rel) if rel else mount
        if os.path.isdir(candidate):
            dirs.append(candidate)
        if not rel:
            break
        rel = os.path.dirname(rel)
    return dirs


def cpu_quota(root: str = CGROUP_ROOT, proc: str = PROC_CGROUP) -> Tuple[Optional[float], Optional[str]]:
    """The tightest CPU quota over this process's cgroup and its ancestors, in CPUs, and its file."""
    best: Tuple[Optional[float], Optional[str]] = (None, None)

    def keep(cpus: float, where: str) -> None:
        nonlocal best
        if best[0] is None or cpus < best[0]:
            best = (cpus, where)

    for controllers, path in _memberships(_read(proc) or ""):
        if controllers == "":  # v2: cpu.max is "max 100000" or "400000 100000"
            for d in _ancestors(root, path):
                f = os.path.join(d, "cpu.max")
                parts = (_read(f) or "").split()
                if len(parts) == 2 and parts[0] != "max" and parts[0].isdigit() and int(parts[1] or 0) > 0:
                    keep(int(parts[0]) / int(parts[1]), f)
        elif "cpu" in controllers.split(","):  # v1: cfs_quota_us is -1 without a quota
            mount = next((os.path.join(root, n) for n in ("cpu,cpuacct", "cpu", "cpuacct,cpu")
                          if os.path.isdir(os.path.join(root, n))), None)
            for d in _ancestors(mount, path) if mount else []:
                quota = _read(os.path.join(d, "cpu.cfs_quota_us"))
                period = _read(os.path.join(d, "cpu.cfs_period_us"))
                if quota and period and quota.lstrip("-").isdigit() and period.isdigit():
                    if int(quota) > 0 and int(period) > 0:
                        keep(int(quota) / int(period), os.path.join(d, "cpu.cfs_quota_us"))
    return best


def memory_limit(root: str = CGROUP_ROOT, proc: str = PROC_CGROUP) -> Tuple[Optional[int], Optional[str]]:
    """The tightest memory limit over this process's cgroup and its ancestors, in MiB, and its file."""
    best: Tuple[Optional[int], Optional[str]] = (None, None)
    for controllers, path in _memberships(_read(proc) or ""):
        files: List[str] = []
        if controllers == "":
            files = [os.path.join(d, "memory.max") for d in _ancestors(root, path)]
        elif "memory" in controllers.split(","):
            mount = os.path.join(root, "memory")
            files = [os.path.join(d, "memory.limit_in_bytes") for d in _ancestors(mount, path)]
        for f in files:
            raw = _read(f)
            if raw and raw.isdigit() and int(raw) < V1_UNLIMITED:
                mib = int(raw) >> 20
                if best[0] is None or mib < best[0]:
                    best = (mib, f)
    return best


def meminfo(path: str = MEMINFO) -> Tuple[Optional[int], Optional[int]]:
    """(MemTotal, MemAvailable) in MiB."""
    total = available = None
    for line in (_read(path) or "").splitlines():
        key, _, value = line.partition(":")
        fields = value.split()
        if fields and fields[0].isdigit():
            if key == "MemTotal":
                total = int(fields[0]) >> 10
            elif key == "MemAvailable":
                available = int(fields[0]) >> 10
    return total, available


#: Where a launcher says how many ranks run on this node, most specific first.
LOCAL_RANK_COUNTS = ("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE")


def local_ranks(environ: Mapping[str, str]) -> Tuple[Optional[int], Optional[str]]:
    for name in LOCAL_RANK_COUNTS:
        raw = (environ.get(name) or "").split("(")[0].split(",")[0].strip()  # Slurm: "4(x2)"
        if raw.isdigit() and int(raw) > 0:
            return int(raw), name
    return None, None


def gather(environ: Mapping[str, str]) -> ResourceInfo:
    try:
        affinity: Optional[int] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    quota, quota_file = cpu_quota()
    limit, limit_file = memory_limit()
    total, available = meminfo()
    ranks, ranks_from = local_ranks(environ)
    return ResourceInfo(cpus_host=os.cpu_count(), cpus_affinity=affinity, cpu_quota=quota,
                        cpu_quota_file=quota_file, memory_total_mib=total, memory_available_mib=available,
                        memory_limit_mib=limit, memory_limit_file=limit_file, local_ranks=ranks,
                        local_ranks_from=ranks_from)


STEP = Step("resources", ("environ",), gather, what="CPU and memory limits")
