"""`check --distributed` under a real torchrun on CPU: one node, two nodes on localhost, and sick ranks.

A rank that hangs or dies must be named in the fleet view while the others are still reported, and
a hung rank must be stopped (its canaries killed) once rank 0 stops waiting. No GPU is needed:
the gather goes through torch.distributed's TCPStore, the checks are `--static` or the test-only
`fault-*` canaries (tests/fault_canaries).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import psutil
import pytest
from fault_canaries.doctor import describe, doctor_env, is_doctor, kill_tagged, new_tagged_env, tagged
from fault_canaries.faults import covers
from fault_canaries.plugin import plugin_env

from inductor_doctor.schemas import validate

HERE = Path(__file__).resolve().parents[1]  # tests/
WRAPPER = HERE / "fault_canaries" / "rank_fault.sh"
STATIC = ["--static", "--only", "const-data-ptr-abi,block-mask-cpu"]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(
    nproc: int,
    doctor_args: Sequence[str],
    nnodes: int = 1,
    node_rank: int = 0,
    port: Optional[int] = None,
    wrapper: bool = False,
) -> List[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc)]
    if nnodes > 1:
        cmd += ["--nnodes", str(nnodes), "--node-rank", str(node_rank), "--master-addr", "127.0.0.1",
                "--master-port", str(port)]
    else:
        cmd += ["--master-port", str(port or free_port())]
    doctor = [sys.executable, "-m", "inductor_doctor", "check", "--distributed", *doctor_args]
    if wrapper:
        return cmd + ["--no-python", "sh", str(WRAPPER), *doctor]
    return cmd + ["--no-python", *doctor]


def run_nodes(
    commands: Sequence[List[str]], env: Dict[str, str], timeout: float = 240
) -> List[subprocess.CompletedProcess]:
    """Start every torchrun (one per simulated node) at once, wait for all, check nothing survives."""
    env = dict(env)
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         stdin=subprocess.DEVNULL)
        for c in commands
    ]
    out: List[subprocess.CompletedProcess] = []
    try:
        for c, p in zip(commands, procs):
            stdout, stderr = p.communicate(timeout=timeout)
            out.append(subprocess.CompletedProcess(c, p.returncode, stdout, stderr))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return out


def assert_clean(tag: str) -> None:
    left = tagged(tag)
    kill_tagged(tag)
    assert not left, f"processes left behind: {describe(left)}"


def settle(tag: str, doctor: Callable[[psutil.Process], bool], timeout: float = 40) -> None:
    """Wait for the doctor's own processes of `tag` to end by themselves; then kill what is left."""
    deadline = time.monotonic() + timeout
    left = [p for p in tagged(tag) if doctor(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [p for p in tagged(tag) if doctor(p) and p.is_running()]
    kill_tagged(tag)
    assert not left, f"doctor processes left behind: {describe(left)}"


def merged(proc: subprocess.CompletedProcess) -> Dict:
    assert proc.stdout.strip(), f"rc={proc.returncode} stderr={proc.stderr[-3000:]}"
    doc = json.loads(proc.stdout)
    validate("merge", doc)
    return doc


def fault_env(tmp_path: Path, tag: str, **extra: str) -> Dict[str, str]:
    return doctor_env({**plugin_env(tmp_path), **extra}, tag)


def test_two_ranks_on_one_node(tmp_path):
    env, tag = new_tagged_env()
    out = tmp_path / "fleet.json"
    [proc] = run_nodes([torchrun(2, [*STATIC, "--format", "json", "--output", str(out)])], env)
    assert_clean(tag)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # --output means what it means for every command: the chosen format, to the file, not stdout.
    assert proc.stdout.strip() == "", proc.stdout[-2000:]
    doc = json.loads(out.read_text())
    validate("merge", doc)
    assert [s["rank"] for s in doc["sources"]] == [0, 1]
    assert doc["missing"] == []
    # Local rank 0 checks the node-wide devices; local rank 1 has no GPU of its own here.
    by_rank = {s["rank"]: s for s in doc["sources"]}
    assert by_rank[0]["devices"] == ["toolchain", "cpu"]
    assert by_rank[1]["devices"] == []
    assert "Traceback" not in proc.stderr


def test_text_output_comes_from_rank_0_only(tmp_path):
    """Rank 1 with a Triton cache of its own: the difference names the ranks (`vm@rank0`,
    `vm@rank1`), not the host twice ("absent on vm; /tmp/t on vm", as it once did)."""
    env, tag = new_tagged_env()
    cache = tmp_path / "rank1-triton-cache"
    env.update(FAULT="env", FAULT_RANK="1", FAULT_ENV=f"TRITON_CACHE_DIR={cache}", COLUMNS="400")
    [proc] = run_nodes([torchrun(2, STATIC, wrapper=True)], env)
    assert_clean(tag)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("inductor-doctor 0.") == 1, proc.stdout
    host = socket.gethostname()
    assert f"{host}/cpu" in proc.stdout  # the columns need no rank: nothing clashes
    assert f"$TRITON_CACHE_DIR: absent on {host}@rank0; {cache} on {host}@rank1" in proc.stdout, proc.stdout
    assert f"{host}@rank1 had no device of its own to check" in proc.stdout


def test_two_nodes_on_localhost(tmp_path):
    env, tag = new_tagged_env()
    port = free_port()
    args = [*STATIC, "--format", "json"]
    node0, node1 = run_nodes(
        [torchrun(1, args, nnodes=2, node_rank=n, port=port) for n in (0, 1)], env
    )
    assert_clean(tag)
    assert node0.returncode == 0 and node1.returncode == 0, node0.stderr[-2000:] + node1.stderr[-2000:]
    assert node1.stdout == ""  # only rank 0 speaks
    doc = merged(node0)
    assert [s["rank"] for s in doc["sources"]] == [0, 1]
    host = socket.gethostname()
    # Both "nodes" are this host: the columns are told apart by rank.
    names = {c["name"] for c in doc["columns"]}
    assert {f"{host}@rank0/cpu", f"{host}@rank1/cpu", f"{host}@rank1/toolchain"} <= names
    assert [g["label"] for g in doc["groups"]] == [f"2 × toolchain on {host}@rank0, {host}@rank1",
                                                   f"2 × cpu on {host}@rank0, {host}@rank1"]


def test_a_rank_set_up_differently_is_named_in_the_differences(tmp_path):
    """Rank 1 of one node runs with its own Triton cache, its own PYTHONPATH entry, CUDA_VISIBLE_DEVICES=''
    and a LOCAL_RANK a wrapper rewrote to 0: every difference names `host@rank1`, never the host
    twice, and the rewritten LOCAL_RANK is a GPU binding difference (torchrun gave it local rank 1).
    Both ranks then hold the node-wide devices: the columns are told apart by rank too."""
    env, tag = new_tagged_env()
    own = tmp_path / "rank1-site"
    own.mkdir()
    cache = tmp_path / "rank1-triton-cache"
    env.update(FAULT="env", FAULT_RANK="1",
               FAULT_ENV=f"TRITON_CACHE_DIR={cache} CUDA_VISIBLE_DEVICES= LOCAL_RANK=0 "
                         f"PYTHONPATH={own}:{env.get('PYTHONPATH', '')}")
    [proc] = run_nodes([torchrun(2, [*STATIC, "--format", "json"], wrapper=True)], env)
    assert_clean(tag)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = merged(proc)
    host = socket.gethostname()
    assert [s["name"] for s in doc["sources"]] == [f"{host}@rank0", f"{host}@rank1"]
    diffs = {d["label"]: {v["value"]: v["sources"] for v in d["values"]}
             for d in doc["environment"]["differences"]}
    assert diffs["$TRITON_CACHE_DIR"] == {"absent": [f"{host}@rank0"], str(cache): [f"{host}@rank1"]}
    assert diffs["GPU binding"] == {
        "every GPU visible": [f"{host}@rank0"],
        "CUDA_VISIBLE_DEVICES='' (no GPU), LOCAL_RANK=0 (torchrun's local rank 1)": [f"{host}@rank1"]}
    assert [f"{host}@rank1"] in diffs["$PYTHONPATH"].values()
    every = [src for d in doc["environment"]["differences"] for v in d["values"] for src in v["sources"]]
    assert set(every) == {f"{host}@rank0", f"{host}@rank1"}, every
    assert {f"{host}@rank0/cpu", f"{host}@rank1/cpu"} <= {c["name"] for c in doc["columns"]}


def _sick_second_node(tmp_path: Path, fault: str, gather_s: int, **extra: str) -> Tuple[Dict, List, str]:
    env, tag = new_tagged_env()
    env.update(fault_env(tmp_path, tag, FAULT=fault, FAULT_RANK="1", INDUCTOR_DOCTOR_TIMEOUT="2",
                         INDUCTOR_DOCTOR_GATHER_TIMEOUT=str(gather_s), **extra))
    port = free_port()
    args = ["--only", "fault-hang", "--no-cache", "--format", "json"]
    start = time.monotonic()
    results = run_nodes(
        [torchrun(1, args, nnodes=2, node_rank=n, port=port, wrapper=True) for n in (0, 1)], env
    )
    took = time.monotonic() - start
    assert_clean(tag)
    return merged(results[0]), [r.returncode for r in results] + [took], tag


@pytest.mark.heavy
@covers("rank-hangs")
def test_hung_rank_is_named_and_stopped(tmp_path):
    """Rank 1's canary hangs with a 600 s timeout; rank 0 stops waiting after 25 s and names it."""
    doc, (rc0, rc1, took), _ = _sick_second_node(tmp_path, "slow", 25)
    assert rc0 == 0  # inconclusive does not fail at the default --fail-on affected
    assert rc1 == 0  # rank 1 was told rank 0 stopped waiting, and gave up quietly
    assert took < 120, "the hung rank kept the job alive"
    [missing] = doc["missing"]
    assert missing["rank"] == 1
    host = socket.gethostname()
    assert missing["name"] == f"rank 1 ({host}, local rank 0)"
    assert "joined, but sent no report within 25s" in missing["reason"]
    # Rank 0 is still reported: its own canary timed out after 2 s.
    [r0] = [r for r in doc["results"] if r["column"] == f"{host}/cpu"]
    assert r0["status"] == "inconclusive" and "timed out after 2s" in r0["reason"]
    [gone] = [r for r in doc["results"] if r["column"] == missing["name"]]
    assert gone["status"] == "inconclusive" and gone["device"] == "all"


def test_dead_rank_on_one_node_torchrun_tears_down_rank0_still_reports(tmp_path):
    """Rank 1's doctor is SIGKILLed (an OOM kill): torchrun SIGTERMs rank 0, which prints what it has."""
    env, tag = new_tagged_env()
    # Rank 0's canary outlives the kill (timeout 30 s > 4 s): torchrun's SIGTERM finds it checking.
    env.update(fault_env(tmp_path, tag, FAULT="stop", FAULT_RANK="1", FAULT_DIE_AFTER="4",
                         INDUCTOR_DOCTOR_TIMEOUT="30", INDUCTOR_DOCTOR_GATHER_TIMEOUT="60"))
    args = ["--only", "fault-hang", "--no-cache", "--format", "json"]
    [proc] = run_nodes([torchrun(2, args, wrapper=True)], env)
    assert_clean(tag)
    assert proc.returncode != 0  # torchrun: a worker failed
    doc = merged(proc)
    assert doc["meta"].get("interrupted") is True
    names = {m["rank"]: m["name"] for m in doc["missing"]}
    assert 1 in names and names[1].startswith("rank 1 (")
    assert "internal error" not in proc.stderr


@covers("rank-dies")
def test_dead_node_is_named(tmp_path):
    """Node 1's doctor is SIGKILLed: rank 0 names it after the deadline and prints the others.

    torchrun on node 0 then waits at its own exit barrier for the dead node (300 s by torchrun's
    default), so the report is read as it is printed and node 0's torchrun is stopped here.
    """
    env, tag = new_tagged_env()
    # Killed 2 s after it joined (rank_fault.sh waits for that), so it is named as dead, not as absent.
    env.update(fault_env(tmp_path, tag, FAULT="die", FAULT_RANK="1", FAULT_DIE_AFTER="2",
                         INDUCTOR_DOCTOR_TIMEOUT="2", INDUCTOR_DOCTOR_GATHER_TIMEOUT="25"))
    port = free_port()
    args = ["--only", "fault-hang", "--no-cache", "--format", "json"]
    cmds = [torchrun(1, args, nnodes=2, node_rank=n, port=port, wrapper=True) for n in (0, 1)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                              stdin=subprocess.DEVNULL) for c in cmds]
    try:
        text = read_one_json(procs[0], timeout=180)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        # Rank 0's doctor finishes on its own; the SIGKILLed rank 1 could not stop its canary.
        settle(tag, is_doctor)
    doc = json.loads(text)
    validate("merge", doc)
    [missing] = doc["missing"]
    assert missing["rank"] == 1 and missing["name"].startswith("rank 1 (")
    # Its helper saw it die: named at once, not after the 25 s deadline.
    assert "died before its check finished" in missing["reason"]
    assert doc["meta"]["duration_s"] < 25
    assert any(r["column"].endswith("/cpu") and r["source"] != missing["name"] for r in doc["results"])


def read_one_json(proc: subprocess.Popen, timeout: float) -> str:
    """The first complete JSON document on `proc`'s stdout (a top-level `}` line ends it)."""
    import threading

    lines: List[str] = []
    done = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.rstrip("\n") == "}":
                break
        done.set()

    threading.Thread(target=pump, daemon=True).start()
    assert done.wait(timeout), f"no report within {timeout}s: {''.join(lines)[-2000:]}"
    return "".join(lines)


@covers("rank-never-joins")
def test_rank_that_never_joins_and_fail_on(tmp_path):
    env, tag = new_tagged_env()
    env.update(doctor_env({"FAULT": "leave", "FAULT_RANK": "1", "INDUCTOR_DOCTOR_GATHER_TIMEOUT": "10"}, tag))
    args = [*STATIC, "--format", "json", "--fail-on", "inconclusive"]
    [proc] = run_nodes([torchrun(2, args, wrapper=True)], env)
    assert_clean(tag)
    doc = merged(proc)
    [missing] = doc["missing"]
    assert missing["name"] == "rank 1 (node 0, local rank 1, never joined)"
    assert "never joined within 10s" in missing["reason"]
    assert proc.returncode == 1  # the missing rank is inconclusive, and --fail-on inconclusive


def test_distributed_outside_torchrun_is_a_usage_error():
    from conftest import run_cli

    proc = run_cli(["check", "--distributed", "--static"], env={"RANK": "", "WORLD_SIZE": ""})
    assert proc.returncode == 2
    assert "runs under torchrun" in proc.stderr and "Traceback" not in proc.stderr


IMPORT_AUDIT = """
import os, sys

def _hook(event, args):
    if event == "import" and args[0] in ("torch", "triton", "torch_xla"):
        with open(os.environ["FAULT_IMPORT_LOG"], "a") as fh:
            fh.write("%d %s %s\\n" % (os.getpid(), args[0], " ".join(sys.argv)))

sys.addaudithook(_hook)
"""


@pytest.mark.parametrize("client", ["native", "torch"])
def test_the_doctor_process_of_every_rank_stays_torch_free(tmp_path, client):
    """Only torchrun itself imports torch: the doctor on each rank never does, and its gather helper
    reaches torchrun's store with a client of its own (an `import torch` per rank was most of what
    `check --distributed` cost on top of torchrun). Told to (INDUCTOR_DOCTOR_GATHER_CLIENT=torch, as
    it does by itself where its own client cannot talk to the store), the helper uses torch's."""
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "sitecustomize.py").write_text(IMPORT_AUDIT)
    log = tmp_path / "imports.log"
    extra = {"INDUCTOR_DOCTOR_GATHER_CLIENT": "torch"} if client == "torch" else {}
    env, tag = new_tagged_env({"PYTHONPATH": str(audit), "FAULT_IMPORT_LOG": str(log), **extra})
    [proc] = run_nodes([torchrun(2, [*STATIC, "--format", "json"])], env)
    assert_clean(tag)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(merged(proc)["sources"]) == 2
    lines = log.read_text().splitlines()
    importers = {" ".join(line.split()[2:]) for line in lines}
    helpers = [i for i in importers if "target/gather.py" in i]
    assert (len(helpers) == 2) if client == "torch" else (helpers == []), importers
    # The doctor is `python -m inductor_doctor check ...`: argv[0] is its __main__.py (or "-m" before
    # runpy has found it, with "check" next); torchrun's argv starts with its own options.
    doctors = [i for i in importers if "target/gather.py" not in i
               and ("inductor_doctor" in i.split()[0] or i.split()[:2] == ["-m", "check"])]
    assert doctors == [], doctors
