"""The cross-target canary's runs, read: what a compile for a GPU that is not here earns, and what not.

The runs are real (tests/data/xtarget/, recorded by tests/envs/record_xtarget.py from Triton 3.1.0, 3.2.0
and 3.9.0 compiling the canary kernels for sm_70, sm_80, sm_86, sm_120 and gfx942 through the doctor's
own runner); here they are read and judged as a check does, without Triton. The compiles themselves run
again, for real, under `-m envs` (tests/known_issues/test_cross_target.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from inductor_doctor.check import cross
from inductor_doctor.check.runner import CanaryRun
from inductor_doctor.check.verdict import UNPROVEN, decide
from inductor_doctor.core.gpu_target import parse_target, parse_targets
from inductor_doctor.core.model import Proof, Status, UsageError
from inductor_doctor.kb import registry

DATA = Path(__file__).resolve().parents[1] / "data" / "xtarget"


def recorded(release: str, target: str) -> cross.CrossRun:
    d = json.loads((DATA / f"triton-{release}-{target}.json").read_text())
    t = parse_target(target)
    job = cross.job(t, "/recorded/python", d["kernels"], d["smem_limit"])
    run = CanaryRun(job=job, returncode=d["returncode"], timed_out=False, interrupted=False,
                    duration_s=d["duration_s"], stdout=d["stdout"], stderr=d["stderr"], result=d["result"])
    return cross.read(t, run, d["kernels"])


ISSUES = {i.id: i for i in registry()}


def verdict(issue_id: str, run: cross.CrossRun) -> Dict[str, object]:
    issue = ISSUES[issue_id]
    out = cross.outcome(issue, run, list(ISSUES.values()))
    assert out is not None
    d = decide(None, True, out)
    return {"status": d.status, "reason": d.reason, "proved": d.proved, "partial": out.partial}


def test_targets_are_named_as_triton_names_them():
    assert parse_target("sm_80").spec == "cuda 80 32"
    assert parse_target("9.0").name == "sm_90"
    assert parse_target("sm_90a").name == "sm_90"  # Triton adds the suffix itself
    assert parse_target("compute_120").sm == 120
    assert parse_target("gfx942").spec == "hip gfx942 64"  # CDNA: wave64
    assert parse_target("gfx1100").spec == "hip gfx1100 32"  # RDNA: wave32
    assert [t.name for t in parse_targets(["sm_80,sm_90", "8.0", "gfx942"])] == ["sm_80", "sm_90", "gfx942"]
    for bad in ("sm80x", "h100", "gfx", ""):
        with pytest.raises(UsageError, match="--gpu"):
            parse_target(bad)


def test_a_clean_compile_is_compiled_for_the_gpu_never_ran_there():
    run = recorded("3.9.0", "sm_80")
    assert run.triton == "3.9.0" and run.trouble is None
    tool = run.assembler()
    assert tool is not None and tool.tool == "ptxas" and tool.release == "12.9"
    v = verdict("ptxas-unsupported-arch", run)
    assert v["status"] is Status.OK and v["proved"] is Proof.COMPILED
    assert "compiled a plain fp32 kernel for sm_80 with triton 3.9.0 and ptxas 12.9" in v["reason"]
    assert v["reason"].endswith(UNPROVEN)


def test_fp8_below_sm_89_is_the_compilers_own_refusal():
    v = verdict("gpu-dtype-unsupported", recorded("3.9.0", "sm_80"))
    assert v["status"] is Status.AFFECTED and v["proved"] is Proof.COMPILED
    assert "type fp8e4nv not supported in this architecture" in v["reason"]
    assert "compiled a bfloat16 tl.dot for sm_80" in v["reason"]  # what did compile is said too
    assert UNPROVEN not in v["reason"]  # a reproduced failure needs no caveat


def test_the_older_fp8_wording_and_bf16_below_sm_80():
    """Triton 3.1 names the cause in the CompilationError's cause, and lowers bf16 to PTX that ptxas
    refuses below sm_80."""
    run = recorded("3.1.0", "sm_70")
    assert "fp8e4nv data type is not supported on CUDA arch < 89" in run.kernels["fp8e4nv"].error
    assert "Feature '.bf16' requires .target sm_80 or higher" in run.kernels["bf16"].error
    v = verdict("gpu-dtype-unsupported", run)
    assert v["status"] is Status.AFFECTED


def test_shared_memory_is_held_to_the_targets_limit():
    ok = verdict("triton-shared-memory", recorded("3.9.0", "sm_80"))
    assert ok["partial"]  # one kernel that fits proves nothing of the others: never a prediction made ok
    assert ok["status"] is Status.OK and "131072 bytes of shared memory per block, within the 166912" in ok[
        "reason"]
    small = verdict("triton-shared-memory", recorded("3.9.0", "sm_86"))
    assert small["status"] is Status.AFFECTED
    assert "Required: 131072, Hardware limit: 101376" in small["reason"]
    amd = verdict("triton-shared-memory", recorded("3.9.0", "gfx942"))
    assert amd["status"] is Status.AFFECTED and "Hardware limit: 65536" in amd["reason"]


def test_an_old_ptxas_for_a_new_gpu_and_a_compiler_that_dies():
    """Triton 3.2's CUDA 12.4 ptxas does not know sm_120, and its MMA pass aborts on the bf16 dot: the
    kernels before the abort answered, the one it died on is named, the rest were never asked."""
    run = recorded("3.2.0", "sm_120")
    assert run.run.returncode == -6 and run.lost is not None and run.lost[0] == "bf16"
    assert "computeCapability not supported" in run.lost[1]
    v = verdict("ptxas-unsupported-arch", run)
    assert v["status"] is Status.AFFECTED
    assert "Value 'sm_120' is not defined for option 'gpu-name'" in v["reason"]
    assert "ptxas 12.4" in v["reason"]
    # Triton's own LLVM says it first, on stderr: a wording of the issue's too
    line = next(ln for ln in run.run.stderr.splitlines() if "recognized processor" in ln)
    assert any(s.strength == "exact" and s.search(line) for s in ISSUES["ptxas-unsupported-arch"].signatures)
    dtype = verdict("gpu-dtype-unsupported", run)  # its kernel failed first of the assembler: not its verdict
    assert dtype["status"] is Status.INCONCLUSIVE
    assert "the error of ptxas-unsupported-arch, found on this target" in dtype["reason"]
    smem = verdict("triton-shared-memory", run)  # never compiled: the compiler died first
    assert smem["status"] is Status.INCONCLUSIVE and "killed the canary (SIGABRT)" in smem["reason"]


def test_a_failure_carrying_another_issues_signature_is_that_issues_row():
    """Triton 3.2 looks for ROCm's ld.lld in /opt/rocm: every gfx942 compile fails with it. That is the
    ROCm toolchain layout's failure (rocm-toolchain-layout, where registered), not the kernels' issues'."""
    run = recorded("3.2.0", "gfx942")
    assert all("ld.lld not found" in k.error for k in run.kernels.values())
    dtype = verdict("gpu-dtype-unsupported", run)
    assert dtype["status"] is Status.INCONCLUSIVE
    layout = [i for i in cross.matched_elsewhere(run, list(ISSUES.values()))]
    if "rocm-toolchain-layout" in ISSUES:
        assert [i.id for i in layout] == ["rocm-toolchain-layout"]
        assert verdict("rocm-toolchain-layout", run)["status"] is Status.AFFECTED


def _facts():
    from inductor_doctor.core.facts import Facts, PythonInfo, TorchInfo, TritonInfo

    return Facts(python=PythonInfo(executable="/usr/bin/python3", version="3.11.7", platform="linux"),
                 torch=TorchInfo(version="2.13.0+cu128", cuda="12.8"), triton=TritonInfo(version="3.7.1"))


def test_a_described_gpu_is_judged_by_the_issues_own_rule():
    """The rule's half of a target cell: this machine's facts (no GPU here) with the target as its one
    GPU, the outcome named after the target."""
    facts = _facts()
    assert facts.gpus == []
    too_old = cross.rule_for(ISSUES["gpu-too-old-for-triton"], facts, parse_target("sm_61"))
    assert too_old is not None and too_old.status is Status.AFFECTED and too_old.device == "sm_61"
    dtype = cross.rule_for(ISSUES["gpu-dtype-unsupported"], facts, parse_target("sm_86"))
    assert dtype is not None and dtype.status is Status.AFFECTED and "needs sm_89" in dtype.reason
    smem = cross.rule_for(ISSUES["triton-shared-memory"], facts, parse_target("sm_89"))
    assert smem is not None and smem.status is Status.LIKELY and "101376" in smem.reason
    assert cross.rule_for(ISSUES["triton-shared-memory"], facts, parse_target("gfx942")) is None  # CUDA's
    assert facts.gpus == []  # the machine's own facts are left as they were


def test_every_kernel_an_issue_names_is_the_canarys():
    """An issue's [cross] kernels are kernels of target/cross_compile.py, in its order."""
    named = {k for i in ISSUES.values() if i.cross for k in i.cross.kernels}
    assert named and named <= set(cross.ORDER), named - set(cross.ORDER)
    assert cross.ORDER[0] == "add_one"  # the plainest first: a compiler that dies later has answered
