"""A log's diagnosis is about the failure the log ends in; a bystander is context, never exit 0.

A log carries more than its failure: an Inductor warning printed at start-up, an error a launcher
retried, an earlier run's traceback above the one that ended the log. Before, any of them was the
diagnosis: a log ending in the user's own `NameError: name 'tl' is not defined` beside Inductor's
"Not enough SMs to use max_autotune_gemm mode" warning was "this is small-gpu-no-autotune-gemm"
with exit 0, so `explain --log build.log && ...` acted on it. Each kind of bystander is tried here
with two cases or more, and so is what must stay a diagnosis: a warning of the same issue that the
final failure shows too, the cause printed above a wrapper (`CalledProcessError`, torchrun's
`ChildFailedError`), a log of warnings only. The logs are `tests/data/triage/bystander/`: real
wordings (the corpus's, cited there), composed into one log each (its README says from where).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import run_cli

from inductor_doctor.schemas import validate
from inductor_doctor.triage.engine import TriageResult, offer_check, triage_stream

CORPUS = Path(__file__).resolve().parents[1] / "data" / "triage"

BYSTANDER = Path(__file__).resolve().parents[1] / "data" / "triage" / "bystander"


def log(name: str) -> str:
    return (BYSTANDER / name).read_text(encoding="utf-8")


def corpus_body(name: str) -> str:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return text[text.index("# ---\n") + len("# ---\n") :]


def triaged(text: str) -> TriageResult:
    result = triage_stream(io.BytesIO(text.encode("utf-8")), name="pasted.log")
    result.check = offer_check(result, None)  # as explain --log offers it
    return result


def by_id(result: TriageResult) -> Dict[str, Dict]:
    return {r["id"]: r for r in result.to_dict()["results"]}


#: log file -> (the bystander, what its reason names, the failure the log ends in)
BYSTANDERS = {
    # a warning: Inductor's SM warning, then the user's NameError (issue 38's reproduction)
    "warning__sms_then_nameerror.log": (
        "small-gpu-no-autotune-gemm", "is a warning", "NameError: name 'tl' is not defined"),
    # a warning: vLLM workers' SM warnings, then a weight-loading KeyError
    "warning__vllm_sms_then_keyerror.log": ("small-gpu-no-autotune-gemm", "is a warning", "KeyError"),
    # a warning: Dynamo's WON'T CONVERT logged at WARNING, then CUDA out of memory
    "warning__wont_convert_then_oom.log": ("compile-bypassed", "is a warning", "OutOfMemoryError"),
    # handled: a link error retried, then a config error
    "handled__ld_retried_then_valueerror.log": (
        "libcuda-not-found", "handled (attempt 1/3", "ValueError: unknown optimizer"),
    # handled: a link error retried, then a run that ends well
    "handled__ld_retried_then_done.log": (
        "libcuda-not-found", "handled (attempt 1/3", "ends without a failure"),
    # earlier: an earlier run's traceback, then another run's NameError
    "earlier__omp_run_then_nameerror.log": ("openmp-headers-missing", "an earlier error", "NameError"),
    # earlier: an earlier traceback, an ignored one (`Exception ignored in`), then CUDA out of memory
    "earlier__omp_run_ignored_then_oom.log": (
        "openmp-headers-missing", "an earlier error", "OutOfMemoryError"),
}


@pytest.mark.parametrize("name", sorted(BYSTANDERS))
def test_a_bystander_is_context_never_the_diagnosis(name: str) -> None:
    issue_id, kind, failure = BYSTANDERS[name]
    result = triaged(log(name))
    doc = result.to_dict()
    validate("triage", doc)
    match = by_id(result)[issue_id]
    assert match["bystander"] and kind in match["bystander"] and failure in match["bystander"], match
    assert match["assessment"] == f"beside the failure, not its cause: {issue_id}"
    assert issue_id not in [m.issue.id for m in result.matched]
    assert not result.diagnosed
    result.match_at = "possible"
    assert not result.diagnosed, "a bystander is no diagnosis, not even with --match possible"
    assert doc["summary"]["context"] == 1 and doc["summary"]["diagnosed"] is False
    assert doc["check"]["command"] is None  # nothing to confirm: a bystander is not a diagnosis


#: case -> (log, the issue that stays the diagnosis)
DIAGNOSES = {
    # the issue's own warning, then the error it announces
    "arch warning, its error": (log("kept__arch_warning_then_its_error.log"), "torch-gpu-arch-missing"),
    # the rank's error, then torchrun's ChildFailedError that only wraps it
    "rank error, ChildFailedError": (log("kept__rank_error_then_child_failed.log"), "openmp-headers-missing"),
    # the compiler's error, then the CalledProcessError of its command
    "compiler error, CalledProcessError": (
        corpus_body("dev2026/python_headers_missing__scope_84.log"), "python-headers-missing"),
    # the error's own words say "ignoring": LLVM's "(ignoring processor)" is no error handled
    "an error that says ignoring": (
        corpus_body("dev2026/ptxas_unsupported_arch__triton_5950.log"), "ptxas-unsupported-arch"),
    # a log of warnings only: nothing failed, the warning is what the log is about
    "warnings only": (
        corpus_body("small_gpu_no_autotune_gemm__vllm_29901.log"), "small-gpu-no-autotune-gemm"),
}


@pytest.mark.parametrize("case", sorted(DIAGNOSES))
def test_what_leads_to_the_failure_stays_the_diagnosis(case: str) -> None:
    text, issue_id = DIAGNOSES[case]
    result = triaged(text)
    assert [m.issue.id for m in result.matched] == [issue_id]
    assert by_id(result)[issue_id]["bystander"] is None
    assert result.diagnosed and not result.context


def test_explain_log_says_the_bystander_as_context_and_exits_1() -> None:
    """The reproduction, through the CLI a script runs: exit 1, no "this is", the warning as context."""
    path = BYSTANDER / "warning__sms_then_nameerror.log"
    text = run_cli(["explain", "--log", str(path)], env={"COLUMNS": "100"})
    assert text.returncode == 1, text.stdout + text.stderr
    assert "this is" not in text.stdout
    assert "no known issue matched the failure this log ends in" in text.stdout
    assert "seen beside the failure, not its cause:" in text.stdout
    assert "small-gpu-no-autotune-gemm (warning)" in text.stdout
    assert "NameError: name 'tl' is not defined" in " ".join(text.stdout.split())
    assert "check --only" not in text.stdout  # nothing to confirm: the bystander is not a diagnosis
    proc = run_cli(["explain", "--log", str(path), "--format", "json", "--match", "possible"])
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    (match,) = doc["results"]
    assert match["id"] == "small-gpu-no-autotune-gemm" and match["bystander"]
    assert doc["check"]["command"] is None


def test_a_sure_match_of_the_failure_keeps_its_bystanders_beside_it() -> None:
    """The failure matched and a bystander too: the diagnosis first, exit 0, the bystander after it."""
    text = log("warning__sms_then_nameerror.log").replace(
        "NameError: name 'tl' is not defined",
        "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
        "/tmp/torchinductor_u/ab/cab.cpp:2:10: fatal error: 'omp.h' file not found",
    )
    result = triaged(text)
    ids: List[str] = [m.issue.id for m in result.matches]
    assert ids == ["openmp-headers-missing", "small-gpu-no-autotune-gemm"]
    assert result.diagnosed and [m.issue.id for m in result.context] == ["small-gpu-no-autotune-gemm"]
