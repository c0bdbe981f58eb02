"""The pieces of fleet mode that need no torchrun: per-GPU scheduling, rank shards, torchrun's env."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest
from fault_canaries.fault_issues import ISSUES

from inductor_doctor.check.engine import CheckOptions, run_checks
from inductor_doctor.core.facts import CudaInfo, Facts, GPUInfo, PythonInfo
from inductor_doctor.core.model import DeviceKind, Finding, Status, UsageError
from inductor_doctor.fleet.helper import RankEnv
from inductor_doctor.fleet.shard import device_filter


def two_gpu_facts(n: int = 2) -> Facts:
    return Facts(
        python=PythonInfo(executable=sys.executable, version="3.11.7"),
        cuda=CudaInfo(driver_version="580.95.05", gpus=[GPUInfo(i, "Fake H100", sm="9.0") for i in range(n)]),
    )


def test_a_gpu_canary_runs_once_per_gpu_in_parallel(tmp_path):
    """Hand-built facts with two GPUs: the canary runs for cuda:0 and cuda:1, side by side."""
    issue = next(i for i in ISSUES if i.id == "fault-per-gpu")
    assert issue.canary is not None
    canary = replace(issue.canary, env={"FAULT_RECORD_DIR": str(tmp_path), "FAULT_RECORD_SLEEP": "2"})
    issue = replace(issue, canary=canary)
    result = run_checks(two_gpu_facts(), [issue], CheckOptions(python=sys.executable, jobs=2))
    assert [(f.device, f.status) for f in result.findings] == [("cuda:0", Status.OK), ("cuda:1", Status.OK)]
    runs = {p.stem: json.loads(p.read_text()) for p in tmp_path.glob("*.json")}
    assert set(runs) == {"cuda_0", "cuda_1"}
    a, b = runs["cuda_0"], runs["cuda_1"]
    assert a["pid"] != b["pid"]
    assert a["start"] < b["end"] and b["start"] < a["end"], "the two GPUs' canaries did not overlap"


def test_shard_splits_gpus_and_keeps_node_devices_on_local_rank_0():
    facts = two_gpu_facts(8)
    facts = device_filter((3, 8)).facts(facts)
    assert [g.device for g in facts.gpus] == ["cuda:3"]
    facts = two_gpu_facts(8)
    facts = device_filter((1, 2)).facts(facts)
    assert [g.device for g in facts.gpus] == ["cuda:1", "cuda:3", "cuda:5", "cuda:7"]
    facts = two_gpu_facts(8)
    facts = device_filter((0, 1)).facts(facts)
    assert len(facts.gpus) == 8
    assert device_filter((0, 2)).keeps("cpu") and not device_filter((1, 2)).keeps("cpu")
    assert device_filter((1, 2)).keeps("cuda:5") and not device_filter((0, 2)).keeps("cuda:5")
    assert device_filter((0, 2)).keeps("cuda") and not device_filter((1, 2)).keeps("xla")


def test_shard_issues_keeps_only_the_gpu_side_off_local_rank_0():
    cpu = next(i for i in ISSUES if i.id == "fault-clean")
    gpu = next(i for i in ISSUES if i.id == "fault-per-gpu")
    both = replace(gpu, id="fault-both", devices=(DeviceKind.CUDA, DeviceKind.TOOLCHAIN))
    assert device_filter((0, 4)).issues([cpu, gpu, both]) == [cpu, gpu, both]
    out = device_filter((2, 4)).issues([cpu, gpu, both])
    assert [i.id for i in out] == ["fault-per-gpu", "fault-both"]
    assert all(i.devices == (DeviceKind.CUDA,) for i in out)
    f = Finding("x", "t", "toolchain", Status.OK, "static", "r")  # type: ignore[arg-type]
    assert device_filter((1, 2)).findings([f]) == []


def test_a_local_rank_without_gpus_runs_nothing(tmp_path):
    facts = two_gpu_facts(1)
    facts = device_filter((1, 2)).facts(facts)
    issues = device_filter((1, 2)).issues(ISSUES)
    result = run_checks(facts, issues, CheckOptions(python=sys.executable, jobs=2))
    assert result.canaries_run == 0
    assert device_filter((1, 2)).findings(result.findings) == []


def _node_of_two_gpus(env):
    """A 2-GPU node as its driver lists it, this rank's CUDA_VISIBLE_DEVICES / LOCAL_RANK applied."""
    from inductor_doctor.probe import cuda_visible

    facts = two_gpu_facts(2)
    facts.cuda.nvidia_smi = "/usr/bin/nvidia-smi"
    facts.cuda.local_rank = env.get("LOCAL_RANK")
    cuda_visible.apply(facts.cuda, env)
    return facts


@pytest.mark.parametrize("env, says", [
    ({"CUDA_VISIBLE_DEVICES": "", "LOCAL_RANK": "1"}, "hides all of the driver's 2 GPUs"),
    ({"LOCAL_RANK": "3"}, "LOCAL_RANK=3 but torch sees 2 GPUs"),
    ({"CUDA_VISIBLE_DEVICES": "1", "LOCAL_RANK": "1"}, "LOCAL_RANK=1 but torch sees 1 GPU"),
])
def test_a_rank_that_sees_none_of_its_gpus_says_so_on_its_own_column(env, says):
    """CUDA_VISIBLE_DEVICES hiding the GPUs of one rank, or more local ranks than GPUs: that rank's
    share keeps the bare `cuda` device, and cuda-devices-hidden is affected there (it used to be
    dropped with everything else of a rank with no GPU, and the fleet view passed)."""
    from inductor_doctor.kb import registry

    local = int(env["LOCAL_RANK"])
    facts = _node_of_two_gpus(env)
    share = device_filter((local, 4 if local == 3 else 2)).settled(facts)
    assert share.keeps("cuda") and not share.keeps("cpu")
    hidden = registry().find("cuda-devices-hidden")
    result = run_checks(share.facts(facts), share.issues([hidden]),
                        CheckOptions(python=sys.executable, static=True))
    [finding] = share.findings(result.findings)
    assert (finding.device, finding.status) == ("cuda", Status.AFFECTED)
    assert says in finding.reason


def test_a_rank_that_sees_its_gpu_keeps_only_its_gpu():
    facts = _node_of_two_gpus({"LOCAL_RANK": "1"})
    share = device_filter((1, 2)).settled(facts)
    assert share.keeps("cuda:1") and not share.keeps("cuda") and not share.keeps("cuda:0")
    cpu_node = two_gpu_facts(0)  # no driver at all: a CPU node's rank 1 has nothing of its own
    assert not device_filter((1, 2)).settled(cpu_node).keeps("cuda")


TORCHRUN = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1",
            "GROUP_WORLD_SIZE": "4",
            "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "job7",
            "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RESTART_COUNT": "2"}


def test_rank_env_from_torchrun():
    ctx = RankEnv.from_environ(dict(TORCHRUN))
    assert (ctx.rank, ctx.world_size, ctx.local_rank, ctx.local_world_size, ctx.group_rank) == (3, 8, 1, 2, 1)
    assert ctx.agent_store and ctx.namespace == "inductor-doctor/fleet/job7/2"
    assert ctx.launcher_local_rank == 1
    # A wrapper that rewrote LOCAL_RANK: torchrun's numbering still says 1.
    assert RankEnv.from_environ({**TORCHRUN, "LOCAL_RANK": "0"}).launcher_local_rank == 1
    # Nodes with different numbers of ranks: torchrun's numbering implies nothing.
    assert RankEnv.from_environ({**TORCHRUN, "GROUP_WORLD_SIZE": "3"}).launcher_local_rank is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"RANK": None}, "RANK not set"),
        ({"MASTER_PORT": "x"}, "not an integer"),
        ({"RANK": "8"}, "inconsistent"),
        ({"LOCAL_RANK": "2"}, "inconsistent"),
        ({"MASTER_PORT": "70000"}, "inconsistent"),
    ],
)
def test_rank_env_errors_are_usage_errors(change, message):
    env = {k: v for k, v in {**TORCHRUN, **change}.items() if v is not None}
    with pytest.raises(UsageError, match=message):
        RankEnv.from_environ(env)


def test_torchrun_bookkeeping_does_not_change_the_cache_key():
    """A new run id per job must not make every `check --distributed` a canary-cache miss."""
    from inductor_doctor.core.envvars import relevant_env

    base = {"PATH": "/usr/bin", "LOCAL_RANK": "0"}
    noisy = {**base, "TORCHELASTIC_RUN_ID": "job-7f3a", "TORCHELASTIC_RESTART_COUNT": "1",
             "INDUCTOR_DOCTOR_GATHER_TIMEOUT": "30"}
    assert relevant_env(noisy) == relevant_env(base)
    assert relevant_env({**base, "TORCHINDUCTOR_MAX_AUTOTUNE": "1"}) != relevant_env(base)


def test_a_cached_report_names_this_run_not_the_one_cached(tmp_path):
    """Two ranks with the same facts (two simulated nodes on one host) share canary outcomes:
    each must still report its own rank and host."""
    from conftest import run_json
    from fault_canaries.plugin import plugin_env

    env = {**plugin_env(tmp_path), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache"), "RANK": "1",
           "LOCAL_RANK": "0", "WORLD_SIZE": "2"}
    args = ["check", "--only", "fault-clean"]
    first = run_json(args, env=env)
    assert first["environment"]["host"]["rank"] == 1 and first["meta"]["cached"] is False
    again = run_json(args, env={**env, "RANK": "0"})
    assert again["meta"]["cached"] is True
    assert again["environment"]["host"]["rank"] == 0


def test_host_names_compress_as_cluster_tools_print_them():
    from inductor_doctor.core.hostlist import column_parts, compress, pieces

    fleet = [f"node{i:04d}" for i in range(2000)]
    assert compress(fleet) == "node[0000-1999]"
    assert compress([h for h in fleet if h not in ("node0090", "node1710")]) == \
        "node[0000-0089,0091-1709,1711-1999]"
    assert compress(["node1710", "node0090", "node1710"]) == "node[0090,1710]"
    assert compress(["node0090"]) == "node0090"
    assert pieces(["gpu01", "gpu02", "gpu04", "login1", "node-a", "a@rank0", "a@rank1"]) == \
        ["gpu[01-02,04]", "login1", "node-a", "a@rank[0-1]"]
    columns = [{"source": h, "device": f"cuda:{i}"} for h in ("n01", "n02", "n03") for i in range(8)
               if (h, i) != ("n02", 3)] + [{"source": "x", "device": "cpu"}]
    assert column_parts(columns) == ["n[01,03]/cuda:0-7", "n02/cuda:0-2,4-7", "x/cpu"]
