"""Compile workers × local ranks beyond the CPUs or the memory the container may use.

Each process that compiles decides its own number of compile workers (`decide_compile_threads` in
`torch/_inductor/config.py`, read from every release into core/_data/releases.json:
`compile_threads`): `TORCHINDUCTOR_COMPILE_THREADS` (read from 2.1), else `min(32, CPUs)`, where
the CPUs are the process's affinity (`os.sched_getaffinity`, through `torch._utils.cpu_count` from
2.12), never a cgroup's CPU quota. Nothing divides them among the ranks of a node. So the sum over
a node is ranks × workers, against what the container may use: the affinity, or the quota where one
is set (pytorch/pytorch#191385: a 4-CPU pod on a 192-CPU host runs 32 per rank).

Where Triton is installed (every torch before 2.5) the workers are processes, each with its own
import of torch: at least what the live probe's process held after `import torch`
(`TorchInfo.import_rss_mib`), each, for as long as they live (pytorch/pytorch#183003: 32 idle
workers per rank ran a GB300 host's CPU memory out). Without Triton, Inductor's C++ kernels compile
on that many threads, each running the C++ compiler: the CPUs count, the compiler's memory is not
measured here.

This is arithmetic on facts, a prediction (`likely` at most): the node is judged oversubscribed
where the workers are more than twice the CPUs it may use, and short of memory where the workers'
floor alone would take more than half the memory limit (the job needs the rest). Which ranks share
the node: what a launcher announced (`LOCAL_WORLD_SIZE`, `SLURM_NTASKS_PER_NODE`), else one per
visible GPU (torchrun's `--nproc-per-node gpu`, the usual layout), else one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from packaging.version import Version

from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.core.releases import torch_release
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one, platform_is_linux
from inductor_doctor.kb._rules import not_installed, release, unknown
from inductor_doctor.kb.compile_workers_fail import forced_threads

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: Workers per CPU the container may use beyond which a node is oversubscribed at the first compile.
CPU_FACTOR = 2
#: Share of the memory limit the workers' floor alone may take.
MEMORY_SHARE = 0.5


class Sizing:
    """The node's compile workers, as torch will size them here, and what they are sized against."""

    def __init__(self, facts: Facts, rule: Dict[str, Any], version: Version) -> None:
        res = facts.resources
        assert res is not None
        self.facts = facts
        forced = forced_threads(version, facts.env) if rule.get("env") else None
        counted = res.cpus_affinity if rule.get("counts") == "affinity" else res.cpus_host
        if forced is not None:
            self.per_rank = max(1, forced)
            self.how = f"TORCHINDUCTOR_COMPILE_THREADS={forced}"
        else:
            self.per_rank = min(int(rule.get("cap") or 32), counted or 1)
            what = "its affinity" if rule.get("counts") == "affinity" else "the host"
            self.how = f"min({rule.get('cap')}, {counted} CPUs of {what})"
        gpus = len(facts.cuda.gpus)
        if res.local_ranks:
            self.ranks, self.ranks_from = res.local_ranks, res.local_ranks_from or "the launcher"
        elif gpus > 1:
            self.ranks, self.ranks_from = gpus, "one per visible GPU"
        else:
            self.ranks, self.ranks_from = 1, "no launcher announced more"
        self.cpus = res.cpus_affinity or res.cpus_host or 1
        self.cpus_from = "its affinity"
        if res.cpu_quota is not None and res.cpu_quota < self.cpus:
            self.cpus, self.cpus_from = res.cpu_quota, f"the CPU quota ({res.cpu_quota_file})"
        self.memory = res.memory_limit_mib or res.memory_total_mib
        self.memory_from = (f"the memory limit ({res.memory_limit_file})" if res.memory_limit_mib
                            else "the host's memory")
        has_triton = facts.triton is not None and bool(facts.triton.version)
        self.processes = has_triton or version < Version("2.5")
        torch = facts.torch
        self.rss = torch.import_rss_mib if torch is not None else None

    @property
    def workers(self) -> int:
        return self.per_rank * self.ranks

    def fitting(self) -> int:
        """The workers per rank that fit both the CPUs and the memory."""
        by_cpu = int(self.cpus * CPU_FACTOR // self.ranks)
        if self.processes and self.rss and self.memory:
            by_memory = int(self.memory * MEMORY_SHARE // (self.rss * self.ranks))
            by_cpu = min(by_cpu, by_memory)
        return max(1, min(by_cpu, self.per_rank))

    def said(self) -> str:
        kind = "processes" if self.processes else "threads, each running the C++ compiler"
        return (f"{self.ranks} local rank{'s' if self.ranks != 1 else ''} ({self.ranks_from}) × "
                f"{self.per_rank} compile workers each ({self.how}; {kind}) = {self.workers}")


def _cpus(n: float) -> str:
    return f"{n:g} CPU{'' if n == 1 else 's'}"


def judge(facts: Facts) -> Tuple[List[RuleOutcome], Optional[Sizing]]:
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch"), None
    if platform_is_linux(facts) is False:
        return one(Status.NOT_APPLICABLE, f"{facts.python.platform}: Inductor sizes no worker pool by "
                   "cgroups here (Windows compiles in the main process)"), None
    version = release(torch.version)
    found = torch_release(torch.version)
    rule = (found[1].get("compile_threads") or {}) if found else {}
    if version is None or not rule:
        return unknown(f"how torch {torch.version} sizes its compile workers"), None
    if facts.resources is None or not (facts.resources.cpus_affinity or facts.resources.cpus_host):
        return one(Status.INCONCLUSIVE, "the CPUs this process may use were not probed"), None
    s = Sizing(facts, rule, version)
    if s.per_rank <= 1:
        return one(Status.NOT_APPLICABLE, f"one compile worker per rank ({s.how}): Inductor compiles in "
                   "the main process"), s
    said = s.said()
    ratio = s.workers / s.cpus
    if ratio > CPU_FACTOR:
        return one(Status.LIKELY, f"{said} workers for {_cpus(s.cpus)} ({s.cpus_from}): {ratio:.0f}× "
                   "oversubscribed at the first compile, which every rank starts at once",
                   workers=s.workers, cpus=s.cpus), s
    if s.processes and s.rss and s.memory:
        need = s.workers * s.rss
        if need > s.memory * MEMORY_SHARE:
            return one(Status.LIKELY, f"{said} worker processes, each at least {s.rss} MiB (one import of "
                       f"torch, measured here): {need / 1024:.1f} GiB against {s.memory / 1024:.1f} GiB of "
                       f"{s.memory_from}, before the job's own", workers=s.workers, memory_mib=s.memory), s
    memory = ""
    if s.processes and s.rss and s.memory:
        memory = (f", at least {s.workers * s.rss / 1024:.1f} GiB of {s.memory / 1024:.1f} GiB "
                  f"({s.memory_from})")
    elif s.processes:
        memory = " (their memory is not known: no live probe of torch's import)"
    return one(Status.OK, f"{said} workers for {_cpus(s.cpus)} ({s.cpus_from}){memory}"), s


def rule(facts: Facts) -> List[RuleOutcome]:
    return judge(facts)[0]


def advise(facts: Facts) -> List[Workaround]:
    """The number of workers per rank that fits this node, as the command to set it."""
    outcomes, s = judge(facts)
    workarounds = ISSUE_WORKAROUNDS
    if s is None or not outcomes or outcomes[0].status is not Status.LIKELY:
        return list(workarounds)
    n = s.fitting()
    memory = " and its memory" if s.processes and s.rss else ""
    sized = Workaround(f"Size the workers for the {s.ranks} ranks that share this node: {n} each fits "
                       f"{_cpus(s.cpus)} ({s.cpus_from}){memory}",
                       f"export TORCHINDUCTOR_COMPILE_THREADS={n}", "env", applies={"torch": ">=2.1"})
    return list(Workaround.pick(workarounds, sized, drop=["export TORCHINDUCTOR_COMPILE_THREADS=4"]))


ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
