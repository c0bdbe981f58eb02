"""compile-workers-oversubscribed: a real cgroup CPU quota and memory limit, then the rule's arithmetic.

The doctor runs inside a cgroup of its own with a CPU quota of half a CPU (cgroup v1
`cpu.cfs_quota_us`, or v2 `cpu.max`, whichever this machine has) while its affinity keeps every CPU,
as in a container: the probe reads the quota, and with torchrun's `LOCAL_WORLD_SIZE` the rule sees
the node's workers outnumber it. The cgroup is the test's, made and removed here. The rest of the
rule (memory, torch 2.0's rule, a variable that sets the workers, GPUs as ranks) is tested on
recorded facts, with the release facts the audit read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator, Optional

import pytest
from conftest import REPO
from test_rules_environment import make_facts, only

from inductor_doctor.core.facts import GPUInfo, ResourceInfo, TritonInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.probe import resources

ISSUE = "compile-workers-oversubscribed"


def _facts(version: str = "2.11.0+cu130", affinity: int = 192, quota: Optional[float] = 4.0,
           ranks: int = 8, rss: Optional[int] = 600, limit: Optional[int] = None, triton: bool = True,
           env=None, gpus: int = 0):
    facts = make_facts(torch_version=version, cuda="13.0" if "cu" in version else None,
                       triton=TritonInfo(version="3.6.0") if triton else None,
                       gpus=[GPUInfo(i, "NVIDIA H100 80GB HBM3", sm="9.0") for i in range(gpus)])
    facts.torch.import_rss_mib = rss
    facts.env = dict(env or {})
    facts.resources = ResourceInfo(cpus_host=192, cpus_affinity=affinity, cpu_quota=quota,
                                   cpu_quota_file="/sys/fs/cgroup/cpu.max" if quota else None,
                                   memory_total_mib=2_000_000, memory_limit_mib=limit,
                                   memory_limit_file="/sys/fs/cgroup/memory.max" if limit else None,
                                   local_ranks=ranks or None,
                                   local_ranks_from="LOCAL_WORLD_SIZE" if ranks else None)
    return facts


def _verdict(facts):
    return only(ISSUE, facts)


def test_a_quota_the_affinity_does_not_show_is_oversubscribed_and_the_fix_fits_it():
    """pytorch#191385: 8 ranks in a 4-CPU pod of a 192-CPU host: 32 workers each."""
    o = _verdict(_facts())
    assert o.status is Status.LIKELY
    assert o.reason.startswith("8 local ranks (LOCAL_WORLD_SIZE) × 32 compile workers each (min(32, 192 CPUs "
                               "of its affinity); processes) = 256 workers for 4 CPUs (the CPU quota")
    assert "64× oversubscribed" in o.reason
    [first, *_] = registry().find(ISSUE).advise(_facts())
    assert first.command == "export TORCHINDUCTOR_COMPILE_THREADS=1"  # 4 CPUs × 2 / 8 ranks
    assert _verdict(_facts(env={"TORCHINDUCTOR_COMPILE_THREADS": "1"})).status is Status.NOT_APPLICABLE


def test_memory_short_of_the_workers_floor_and_the_rest():
    # 8 ranks × 32 workers of 600 MiB = 150 GiB against a 200 GiB limit: more than half of it.
    o = _verdict(_facts(quota=None, affinity=128, limit=200 * 1024))
    assert o.status is Status.LIKELY and "150.0 GiB against 200.0 GiB of the memory limit" in o.reason
    [first, *_] = registry().find(ISSUE).advise(_facts(quota=None, affinity=128, limit=200 * 1024))
    assert first.command == "export TORCHINDUCTOR_COMPILE_THREADS=21"  # 100 GiB / (600 MiB × 8)
    ok = _verdict(_facts(quota=None, affinity=128, limit=2_000_000))
    assert ok.status is Status.OK and "256 workers for 128 CPUs (its affinity)" in ok.reason
    # No Triton, torch >= 2.5: C++ kernels compile on threads; their memory is not judged.
    threads = _verdict(_facts(quota=None, affinity=128, limit=200 * 1024, triton=False,
                              version="2.13.0+cpu"))
    assert threads.status is Status.OK and "threads, each running the C++ compiler" in threads.reason


def test_ranks_default_to_the_visible_gpus_and_torch_2_0_reads_no_variable():
    o = _verdict(_facts(ranks=0, gpus=8, quota=2.0, affinity=64))
    assert o.status is Status.LIKELY and o.reason.startswith("8 local ranks (one per visible GPU) × 32")
    old = _verdict(_facts(version="2.0.1+cu118", env={"TORCHINDUCTOR_COMPILE_THREADS": "1"}))
    assert old.status is Status.LIKELY and "min(32, 192 CPUs of its affinity)" in old.reason
    one_rank = _verdict(_facts(ranks=0, quota=None, affinity=16))
    assert one_rank.status is Status.OK and "1 local rank (no launcher announced more)" in one_rank.reason


def test_the_release_facts_say_how_each_torch_sizes_its_workers():
    from inductor_doctor.core.releases import snapshot

    rules = {v: facts["compile_threads"] for v, facts in snapshot()["torch"].items()}
    assert {r["counts"] for r in rules.values()} == {"affinity"}
    assert {r["cap"] for r in rules.values()} == {32}
    assert rules["2.0.0"]["env"] is None and rules["2.1.0"]["env"] == "TORCHINDUCTOR_COMPILE_THREADS"
    assert rules["2.13.0"]["file"] == "torch/_inductor/config.py, torch/_utils.py"


# --- a real quota -------------------------------------------------------------------------------


@pytest.fixture
def cgroup_with_quota() -> Iterator[Path]:
    """A cgroup of the test's own, limited to half a CPU, on whichever hierarchy holds the cpu controller."""
    name = f"inductor-doctor-test-{uuid.uuid4().hex[:8]}"
    v1 = Path(resources.CGROUP_ROOT) / "cpu"
    v2 = Path(resources.CGROUP_ROOT)
    made: Optional[Path] = None
    try:
        if (v1 / "cpu.cfs_quota_us").exists():
            made = v1 / name
            made.mkdir()
            (made / "cpu.cfs_quota_us").write_text("50000")  # of a 100000 us period
        elif "cpu" in (v2 / "cgroup.subtree_control").read_text(errors="replace").split() \
                if (v2 / "cgroup.subtree_control").exists() else False:
            made = v2 / name
            made.mkdir()
            (made / "cpu.max").write_text("50000 100000")
        else:
            pytest.skip("no cgroup cpu controller this test may use")
    except OSError as exc:
        if made is not None and made.exists():
            made.rmdir()
        pytest.skip(f"cannot make a cgroup here ({exc})")
    try:
        yield made
    finally:
        for _ in range(50):  # the processes of the run have left it once they exit
            try:
                made.rmdir()
                break
            except OSError:
                import time

                time.sleep(0.1)


@pytest.mark.slow
def test_the_doctor_in_a_real_cpu_quota(cgroup_with_quota: Path):
    procs = cgroup_with_quota / "cgroup.procs"
    script = f'echo $$ > "{procs}" && exec "$@"'
    env = {**os.environ, "LOCAL_WORLD_SIZE": "2", "PYTHONPATH": str(REPO)}
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    doctor = [sys.executable, "-m", "inductor_doctor", "check", "--static", "--only", ISSUE,
              "--format", "json", "-q"]
    proc = subprocess.run(["sh", "-c", script, "sh", *doctor], capture_output=True, text=True, env=env,
                          timeout=300)
    report = json.loads(proc.stdout)
    res = report["environment"]["resources"]
    assert res["cpu_quota"] == 0.5 and res["cpu_quota_file"].startswith(str(cgroup_with_quota))
    [r] = report["results"]
    cpus = res["cpus_affinity"]
    workers = 2 * min(32, cpus)
    assert r["status"] == "likely", r["reason"]
    assert f"= {workers} workers for 0.5 CPUs (the CPU quota ({cgroup_with_quota}" in r["reason"]
    assert r["workarounds"][0]["command"] == "export TORCHINDUCTOR_COMPILE_THREADS=1"
