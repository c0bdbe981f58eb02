"""GPU rows earned without the GPU: real Triton releases compile the canary kernels for GPUs not here.

The venvs are built by tests/envs/build_xtarget.sh (Triton 3.9.0 and 3.7.1 over this machine's torch 2.13,
Triton 3.2.0 and 3.1.0 alone). Each failure the cross-target canary earns is first made by the compiler
itself, with the canary's script run on its own as a user would run a reproducer (no doctor, no harness),
then predicted by the issue's rule on the described GPU from the venv's probed facts, then earned by
`check --gpu` through the CLI: an old ptxas for a new GPU (Triton 3.2's CUDA 12.4 ptxas and sm_120), fp8
below sm_89, bf16 below sm_80 (Triton 3.2 on sm_70), a kernel over the shared-memory limit (sm_86), the
ROCm linker Triton 3.2 looks for in /opt/rocm. A check runs once per venv, all its targets side by side.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Dict, List, Tuple

import pytest
from conftest import run_cli, venv_python

from inductor_doctor.check import cross
from inductor_doctor.core.gpu_target import parse_target
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.kb.triton_shared_memory import target_limit

pytestmark = [pytest.mark.envs, pytest.mark.slow]

NEW = ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx1100"]
PAIRED = ["sm_80", "sm_90", "sm_100", "sm_120"]
OLD = ["sm_70", "sm_75", "sm_80", "sm_120", "gfx942"]


def env(release: str) -> str:
    return venv_python(f"xtarget-triton-{release}", builder="build_xtarget.sh")


def standalone(release: str, target: str, tmp_path) -> Dict[str, dict]:
    """The canary's script run on its own, as a reproducer: the compiler's own words, per kernel."""
    t = parse_target(target)
    limit = target_limit(t)[0]
    run_env = {**os.environ, "INDUCTOR_DOCTOR_XTARGET": t.spec, "TRITON_CACHE_DIR": str(tmp_path / "triton"),
               "INDUCTOR_DOCTOR_XTARGET_SMEM": str(limit or "")}
    proc = subprocess.run([env(release), str(cross.SCRIPT)], capture_output=True, text=True, env=run_env,
                          timeout=300)
    lines = [json.loads(ln[len(cross.MARKER):]) for ln in proc.stdout.splitlines()
             if ln.startswith(cross.MARKER)]
    return {d["kernel"]: d for d in lines if "kernel" in d}


_CHECKS: Dict[Tuple[str, Tuple[str, ...]], Tuple[dict, float]] = {}


def check(release: str, targets: List[str]) -> Tuple[Dict[Tuple[str, str], dict], float]:
    """`check --static --gpu ...` on the venv, once per (release, targets): rows by (issue, device)."""
    key = (release, tuple(targets))
    if key not in _CHECKS:
        args = ["check", "--static", "--no-cache", "-q", "--python", env(release)]
        for t in targets:
            args += ["--gpu", t]
        start = time.monotonic()
        proc = run_cli([*args, "--format", "json", "--fail-on", "never"], timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _CHECKS[key] = (json.loads(proc.stdout), time.monotonic() - start)
    data, took = _CHECKS[key]
    return {(r["id"], r["device"]): r for r in data["results"]}, took


def described_rule(release: str, issue_id: str, target: str):
    """The issue's rule on the described GPU, from the facts the probe reads of the venv."""
    from inductor_doctor.probe import gather

    issue = registry().find(issue_id)
    assert issue is not None
    return cross.rule_for(issue, gather(env(release)), parse_target(target))


# --- an old ptxas for a new GPU -------------------------------------------------------------------


def test_an_old_ptxas_for_a_new_gpu(tmp_path):
    said = standalone("3.2.0", "sm_120", tmp_path)
    assert "Value 'sm_120' is not defined for option 'gpu-name'" in said["add_one"]["error"]
    assert said["add_one"]["tools"][0]["release"] == "12.4"
    rule = described_rule("3.2.0", "ptxas-unsupported-arch", "sm_120")
    # the probe asked ptxas for the GPUs here only: the release audit's run of the same binary answers
    assert rule is not None and rule.status in (Status.AFFECTED, Status.LIKELY), rule
    rows, _ = check("3.2.0", OLD)
    row = rows[("ptxas-unsupported-arch", "sm_120")]
    assert (row["status"], row["basis"], row.get("proved")) == ("affected", "canary", "compiled"), row
    assert "ptxas 12.4" in row["reason"] and "is not defined for option 'gpu-name'" in row["reason"]
    assert rows[("ptxas-unsupported-arch", "sm_80")]["status"] == "ok"
    # A newer Triton's ptxas-blackwell knows it: the same GPU compiles.
    new, _ = check("3.9.0", NEW)
    row = new[("ptxas-unsupported-arch", "sm_120")]
    assert row["status"] == "ok" and "ptxas-blackwell 13.4" in row["reason"], row
    assert row["reason"].endswith("loading and launching on the GPU unproven")
    assert new[("ptxas-unsupported-arch", "sm_80")]["reason"].count("ptxas 12.9") == 1


# --- a dtype the GPU cannot compile ---------------------------------------------------------------


def test_fp8_below_sm_89(tmp_path):
    said = standalone("3.9.0", "sm_80", tmp_path)
    assert "type fp8e4nv not supported in this architecture" in said["fp8e4nv"]["error"]
    assert said["fp8e5"]["status"] == "compiled"  # the other fp8 compiles there
    older = standalone("3.1.0", "sm_80", tmp_path)
    assert "fp8e4nv data type is not supported on CUDA arch < 89" in older["fp8e4nv"]["error"]
    rule = described_rule("3.9.0", "gpu-dtype-unsupported", "sm_80")
    assert rule is not None and rule.status is Status.AFFECTED
    rows, _ = check("3.9.0", NEW)
    for target in ("sm_75", "sm_80"):
        row = rows[("gpu-dtype-unsupported", target)]
        assert (row["status"], row.get("proved")) == ("affected", "compiled"), row
    for target in ("sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx1100"):
        row = rows[("gpu-dtype-unsupported", target)]
        assert row["status"] == "ok" and row.get("proved") == "compiled", row
    assert run_cli(["check", "--static", "--no-cache", "-q", "--python", env("3.1.0"), "--gpu", "sm_80",
                    "--only", "gpu-dtype-unsupported", "--format", "json"]).returncode == 0  # a warning


def test_bf16_below_sm_80_where_triton_lowers_it_natively(tmp_path):
    said = standalone("3.2.0", "sm_70", tmp_path)
    assert "Feature '.bf16' requires .target sm_80 or higher" in said["bf16"]["error"]
    rows, _ = check("3.2.0", OLD)
    row = rows[("gpu-dtype-unsupported", "sm_70")]
    assert row["status"] == "affected"
    assert "requires .target sm_80" in " ".join(row["evidence"]) + row["reason"]
    # Triton 3.7 emulates it there: the bf16 kernel compiles for sm_70 (fp8 still does not).
    paired = standalone("3.7.1", "sm_70", tmp_path)
    assert paired["bf16"]["status"] == "compiled", paired["bf16"]


# --- a kernel over the shared-memory limit --------------------------------------------------------


def test_shared_memory_over_the_limit(tmp_path):
    said = standalone("3.9.0", "sm_86", tmp_path)
    assert said["smem_a100"]["shared"] == 131072
    assert "Required: 131072, Hardware limit: 101376" in said["smem_a100"]["error"]
    rule = described_rule("3.2.0", "triton-shared-memory", "sm_89")  # no CPU-only torch to say n/a
    assert rule is not None and rule.status is Status.LIKELY  # the table predicts it
    rows, _ = check("3.9.0", NEW)
    assert rows[("triton-shared-memory", "sm_89")]["status"] == "affected"
    assert rows[("triton-shared-memory", "sm_120")]["status"] == "affected"
    assert rows[("triton-shared-memory", "gfx942")]["status"] == "affected"  # 64 KB of LDS
    old, _ = check("3.2.0", OLD)
    fits = old[("triton-shared-memory", "sm_80")]
    assert fits["status"] == "ok" and "within the 166912" in fits["reason"], fits
    # On sm_75 Triton does not pipeline (no cp.async): the tile needs one stage, and fits; one kernel that
    # fits proves nothing of the rest, so the table's prediction stands.
    t4 = old[("triton-shared-memory", "sm_75")]
    assert t4["status"] == "likely" and "could run only part of it" in t4["reason"], t4


# --- the ROCm linker ------------------------------------------------------------------------------


def test_the_rocm_linker_triton_looks_for(tmp_path):
    said = standalone("3.2.0", "gfx942", tmp_path)
    assert "ld.lld not found" in said["add_one"]["error"]
    rows, _ = check("3.2.0", OLD)
    if registry().find("rocm-toolchain-layout") is not None:
        assert rows[("rocm-toolchain-layout", "gfx942")]["status"] == "affected"
    row = rows[("gpu-dtype-unsupported", "gfx942")]
    assert row["status"] == "inconclusive", row
    # Triton 3.9 links in process: no ld.lld to find, and the hsaco is there.
    new, _ = check("3.9.0", NEW)
    assert new[("gpu-dtype-unsupported", "gfx942")]["status"] == "ok"
    assert "to a hsaco" in new[("gpu-dtype-unsupported", "gfx1100")]["reason"]


# --- torch 2.13's own Triton, and what a target costs ---------------------------------------------


def test_torch_213s_triton_compiles_for_the_gpus_of_its_time():
    rows, _ = check("3.7.1", PAIRED)
    for target in PAIRED:
        assert rows[("ptxas-unsupported-arch", target)]["status"] == "ok", target
    assert "ptxas-blackwell 13.1" in rows[("ptxas-unsupported-arch", "sm_120")]["reason"]
    assert "ptxas 12.8" in rows[("ptxas-unsupported-arch", "sm_90")]["reason"]


def test_a_target_costs_about_one_compile_and_targets_run_side_by_side():
    """`check --static` alone, then with one and with four targets: the targets' canaries run in parallel."""
    python = env("3.7.1")

    def took(*gpus: str) -> float:
        args = ["check", "--static", "--no-cache", "-q", "--python", python, "--format", "json"]
        for g in gpus:
            args += ["--gpu", g]
        start = time.monotonic()
        assert run_cli(args).returncode in (0, 1)
        return time.monotonic() - start

    base, one, four = took(), took("sm_80"), took("sm_80", "sm_86", "sm_90", "sm_120")
    print(f"check --static: {base:.1f}s; one target: {one:.1f}s; four: {four:.1f}s")
    assert one - base < 30
    assert four - base < 3 * (one - base) + 10  # side by side, on as few as two cores


# --- plan --gpu, and plan --suggest --verify ------------------------------------------------------


def test_plan_compiles_with_the_planned_triton_when_it_is_installed():
    """`plan --gpu` run by an interpreter whose Triton is the planned one: the compile earns the rows it
    decides; planned with another Triton, they stay predictions and the plan says why."""
    plan = ["plan", "torch==2.13.0", "--gpu", "sm_80", "--format", "json"]
    doc = json.loads(run_cli([*plan, "triton==3.9.0"], python=env("3.9.0")).stdout)
    rows = {r["id"]: r for r in doc["results"]}
    assert doc["meta"]["gpu_compile"]["compiled"] and doc["meta"]["gpu_compile"]["triton"] == "3.9.0"
    fp8 = rows["gpu-dtype-unsupported"]
    assert (fp8["status"], fp8["basis"], fp8.get("proved")) == ("affected", "canary", "compiled"), fp8
    ptxas = rows["ptxas-unsupported-arch"]
    assert (ptxas["status"], ptxas.get("proved")) == ("ok", "compiled"), ptxas
    other = json.loads(run_cli([*plan, "triton==3.7.1"], python=env("3.9.0")).stdout)
    said = other["meta"]["gpu_compile"]
    assert not said["compiled"], said
    assert "triton 3.9.0 is installed here, not the planned triton==3.7.1" in said["reason"]
    assert all(r.get("proved") is None for r in other["results"])


def test_suggest_verify_compiles_for_the_gpus_it_was_asked_about(tmp_path):
    """The scratch venv of `plan --suggest --verify` gets the suggestion (here torch 2.13.0's CPU build and
    Triton 3.7.1, as one whose solver chose them) and its check compiles for each GPU described."""
    from inductor_doctor.commands.suggest import verify
    from inductor_doctor.plan.suggest import Candidate, Judged, Machine, Solution

    candidate = Candidate(torch="2.13.0", variant="cpu", cuda=None, index_url=None, triton="3.7.1")
    machine = Machine(gpus=(80, 120), gpu_names=("sm_80", "sm_120"), python_version="3.11",
                      source="the options given")
    solution = Solution(machine=machine, chosen=Judged(candidate=candidate), passed_over=[])
    os.environ["TMPDIR"] = str(tmp_path)
    try:
        out = verify(solution, gpus=["sm_80", "sm_120"])
    finally:
        os.environ.pop("TMPDIR", None)
    assert out["installed"], out
    compiled = "\n".join(out["gpus"]["compiled"])
    assert "ptxas-unsupported-arch on sm_120: ok" in compiled and "ptxas-blackwell 13.1" in compiled, compiled
    assert "gpu-dtype-unsupported on sm_80: affected" in compiled, compiled
