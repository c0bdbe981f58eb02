"""A canary that can never fail is worthless: put each bug back (or fake its compiler) and check
that the real canary script plus the engine's classifier say `affected`, and `ok` without it.

* view-dtype-align, on CPU: a `sitecustomize` restores the pre-pytorch#151859 `is_unaligned()`
  (a ReinterpretView's offset ignored) and GPU input semantics (`should_assume_input_aligned` true
  for aligned inputs); then torch 2.13 raises the exact upstream assertion.
* block-mask-cpu: a `g++` that answers every C++ compile with g++'s "conflicting declaration"
  error, and a real clang without libomp headers for the "other compile error" path.

Each run is a real Inductor compile on the CPU (15-60 s on 2 shared cores).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_json, which_or_skip

from inductor_doctor.check.engine import canary_outcome, classify
from inductor_doctor.check.runner import CanaryJob, ProcessGroups, run_one
from inductor_doctor.core.model import KnownIssue, Status
from inductor_doctor.kb import registry
from inductor_doctor.target import canary_path

pytestmark = pytest.mark.slow

PRE_FIX_ALIGNMENT = '''\
"""Test-only: the alignment logic of torch 2.8.0 nightlies 2025-04-08..22, on CPU inputs."""
import torch._inductor.graph as graph
import torch._inductor.ir as ir
from torch._inductor.utils import tensor_is_aligned


def is_unaligned(node):
    if isinstance(node, (ir.TensorBox, ir.StorageBox)):
        return is_unaligned(node.data)
    if isinstance(node, ir.ReinterpretView):
        return is_unaligned(node.data)  # before pytorch#151859: the view's own offset is ignored
    if isinstance(node, ir.Buffer):
        return node.get_name() in ir.V.graph.unaligned_buffers
    return False


assert hasattr(ir, "is_unaligned") and hasattr(graph, "should_assume_input_aligned")
ir.is_unaligned = is_unaligned
graph.should_assume_input_aligned = tensor_is_aligned  # what CUDA inputs get
'''

CONFLICTING_GXX = '''\
#!/bin/sh
# Test-only: g++, except that every C++ source it is asked to compile "has" a conflicting declaration.
for a in "$@"; do
  case "$a" in
    *.cpp|*.hpp) echo "$a:12:10: error: conflicting declaration 'auto tmp0'" >&2; exit 1 ;;
  esac
done
exec g++ "$@"
'''


def issue(issue_id: str) -> KnownIssue:
    found = registry().find(issue_id)
    assert found is not None
    return found


def run_canary(issue_id: str, device: str, env: dict):
    """The canary as the engine runs it (harness, fresh caches, own process group), then classified."""
    i = issue(issue_id)
    assert i.canary is not None
    job = CanaryJob(key=f"{issue_id}@{device}", script=canary_path(i.canary.script), device=device,
                    python=sys.executable, timeout_s=600, needs=i.canary.needs,
                    env={**i.canary.env, **env}, affected_signals=tuple(i.canary.affected_exit_signals))
    run = run_one(job, ProcessGroups())
    return run, classify(i, run)


@pytest.fixture()
def pre_fix_alignment(tmp_path: Path) -> dict:
    site = tmp_path / "prefix"
    site.mkdir()
    (site / "sitecustomize.py").write_text(PRE_FIX_ALIGNMENT)
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


@pytest.mark.heavy
def test_view_align_canary_flags_the_pre_fix_logic(pre_fix_alignment):
    """With the bug patched back, `affected`, even where the user has set the workaround: the canary
    judges the installed torch (and then tries the workaround itself)."""
    env = dict(pre_fix_alignment, TORCHINDUCTOR_ALIGNMENT_ASSERTS="0")
    run, (status, reason, evidence) = run_canary("view-dtype-align", "cpu", env)
    assert status is Status.AFFECTED, (reason, run.stderr[-2000:])
    assert "Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=4" in reason
    assert "with TORCHINDUCTOR_ALIGNMENT_ASSERTS=0: clean" in reason


@pytest.mark.heavy
def test_view_align_canary_is_clean_on_this_torch():
    run, (status, reason, _) = run_canary("view-dtype-align", "cpu", {})
    assert status is Status.OK, (reason, run.stderr[-2000:])
    proof = canary_outcome(issue("view-dtype-align"), run).proof  # an `ok` the verdict table accepts
    assert proof is not None and "C++ kernel" in proof and "Dynamo captured" in proof, run.result


def test_block_mask_conflicting_declaration_is_affected_through_the_cli(tmp_path):
    which_or_skip("g++")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "g++"
    fake.write_text(CONFLICTING_GXX)
    fake.chmod(0o755)
    data = run_json(["check", "--only", "block-mask-cpu", "--no-cache"], env={"CXX": str(fake)})
    (row,) = data["results"]
    assert (row["status"], row["basis"]) == ("affected", "canary"), row
    assert "conflicting declaration" in row["reason"]
    assert row["workarounds"], "an affected finding carries its workarounds"


@pytest.mark.heavy
def test_block_mask_other_compile_error_is_inconclusive_with_its_cause(tmp_path):
    clang = which_or_skip("clang++-19")
    has_omp = subprocess.run([clang, "-fopenmp", "-E", "-x", "c++", "-"], input="#include <omp.h>\n",
                             capture_output=True, text=True).returncode == 0
    if has_omp:
        pytest.skip("this clang has OpenMP headers; the failure needs a clang without them")
    data = run_json(["check", "--only", "block-mask-cpu", "--no-cache"], env={"CXX": clang})
    (row,) = data["results"]
    assert row["status"] == "inconclusive", row
    assert "'omp.h' file not found" in row["reason"], row["reason"]
    assert "conflicting" not in row["reason"]


def test_cpu_canaries_compile_their_kernels_on_threads_and_nothing_else_does(tmp_path):
    """A CPU canary gets the threads the check allows (C++ kernels compile on plain threads, as in a
    user's own compile) with Triton's pool kept cold; a GPU or toolchain canary keeps one thread;
    INDUCTOR_DOCTOR_COMPILE_THREADS overrides both."""
    from inductor_doctor.check.canary_env import CPU_THREADS_ENV, canary_env

    allowed = {CPU_THREADS_ENV: "4"}
    cpu = canary_env({}, tmp_path, allowed, "cpu")
    assert (cpu["TORCHINDUCTOR_COMPILE_THREADS"], cpu["TORCH_WARM_POOL"]) == ("4", "0")
    for device in ("cuda:0", "toolchain", "xla"):
        other = canary_env({}, tmp_path, allowed, device)
        assert other["TORCHINDUCTOR_COMPILE_THREADS"] == "1" and "TORCH_WARM_POOL" not in other
    assert canary_env({}, tmp_path, {}, "cpu")["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    forced = canary_env({"INDUCTOR_DOCTOR_COMPILE_THREADS": "2"}, tmp_path, allowed, "cuda:0")
    assert forced["TORCHINDUCTOR_COMPILE_THREADS"] == "2" and "TORCH_WARM_POOL" not in forced


def test_the_check_allows_cpu_threads_only_where_no_compile_pool_comes_with_them():
    """torch 2.0-2.4 start a pool of compile workers along with more threads (compile-workers-fail's
    subject), so a CPU canary there keeps one."""
    from types import SimpleNamespace

    from inductor_doctor.check.canary_env import cpu_compile_threads

    def facts(version):
        return SimpleNamespace(torch=SimpleNamespace(version=version))

    assert cpu_compile_threads(facts("2.4.1+cu121")) == 1
    assert cpu_compile_threads(facts(None)) == 1
    expected = 4 if len(os.sched_getaffinity(0)) > 1 else 1
    assert cpu_compile_threads(facts("2.5.1+cu124")) == expected
    assert cpu_compile_threads(facts("2.13.0+cpu")) == expected


LEARN_ISAS = '''\
import torch._inductor.cpu_vec_isa as m
print("ISAS", [str(i) for i in m.valid_vec_isa_list()])
'''


@pytest.mark.heavy
def test_the_cpu_vector_isas_are_learned_once_whatever_a_canary_names_its_worker_log(tmp_path):
    """The ISAs are a machine fact, learned by the first canary and replayed to the next. A canary
    that points TORCHINDUCTOR_WORKER_LOGPATH into its own scratch directory (compile-workers-fail
    does) must not make every run learn them again: that cost 80 s a check on a 16-core host."""
    import json

    from inductor_doctor.check.runner import HARNESS

    script = tmp_path / "learn.py"
    script.write_text(LEARN_ISAS)
    machine = tmp_path / "machine"
    seen = []
    for n in (1, 2):
        env = dict(os.environ, INDUCTOR_DOCTOR_MACHINE_DIR=str(machine), INDUCTOR_DOCTOR_CXX_ID="g++ test",
                   TORCHINDUCTOR_CACHE_DIR=str(tmp_path / f"inductor{n}"),
                   TORCHINDUCTOR_WORKER_LOGPATH=str(tmp_path / f"scratch{n}" / "compile_worker.log"))
        out = subprocess.run([sys.executable, str(HARNESS), str(script), "cpu"], env=env,
                             capture_output=True, text=True, timeout=300)
        line = next(ln for ln in out.stdout.splitlines() if ln.startswith("ISAS"))
        seen.append(line)
        assert json.loads(out.stdout.strip().splitlines()[-1].split(" ", 1)[1])["status"] == "ok", out.stderr
    records = sorted(p.name for p in machine.glob("vec-isa-*.json"))
    assert len(records) == 1, records
    assert seen[0] == seen[1]


WAIT_FOR_RECORD = '''\
import glob, os, sys, time
deadline = time.monotonic() + 240
while time.monotonic() < deadline:
    if glob.glob(os.path.join(os.environ["INDUCTOR_DOCTOR_MACHINE_DIR"], "vec-isa-*.json")):
        print("RECORDED")
        break
    time.sleep(0.2)
'''


def test_a_canary_that_asks_for_it_has_the_isas_learned_beside_it_from_the_start(tmp_path):
    """block-mask-cpu declares INDUCTOR_DOCTOR_EARLY_ISA: the harness starts a learner at once, so the
    ISAs are on record before Inductor asks for them, off the canary's longest path. This canary
    never asks: the record still appears, written by the learner alone."""
    from inductor_doctor.check.runner import HARNESS

    script = tmp_path / "wait.py"
    script.write_text(WAIT_FOR_RECORD)
    machine = tmp_path / "machine"
    env = dict(os.environ, INDUCTOR_DOCTOR_MACHINE_DIR=str(machine), INDUCTOR_DOCTOR_CXX_ID="g++ test",
               INDUCTOR_DOCTOR_EARLY_ISA="1", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    out = subprocess.run([sys.executable, str(HARNESS), str(script), "cpu"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert "RECORDED" in out.stdout, (out.stdout[-2000:], out.stderr[-2000:])
    assert issue("block-mask-cpu").canary.env.get("INDUCTOR_DOCTOR_EARLY_ISA") == "1"
