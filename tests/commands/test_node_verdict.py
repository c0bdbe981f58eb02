"""`check --format node-verdict`: the verdict a fleet engine takes, on real broken states of this machine.

The contract (docs/fleet.md, schemas/node-verdict.schema.json): exit 0 healthy, 1 a problem, anything
else unknown; one line of reason naming the issue and whose problem it is; a severity per check. The
states are real: a PATH whose directories hold no C++ compiler (a node image without one), a
`CXX` and a cache directory the job's environment points at nothing usable.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict

import pytest
from conftest import run_cli

from inductor_doctor.core.codes import FailOn
from inductor_doctor.core.model import Basis, Finding, Report, Severity, Status
from inductor_doctor.fleet.node_verdict import node_verdict
from inductor_doctor.schemas import validate

ONLY = "cxx-compiler-missing,cache-dir-unwritable,python-headers-missing,torch-missing"


def verdict(env: Dict[str, str] | None = None, *extra: str) -> tuple[int, Dict[str, Any]]:
    proc = run_cli(["check", "--static", "--only", ONLY, "--format", "node-verdict", "-q", *extra], env=env)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    validate("node-verdict", doc)
    return proc.returncode, doc


@pytest.fixture(scope="module")
def no_compiler_path(tmp_path_factory) -> str:
    """A node image without a C++ compiler: PATH holds the interpreter and nothing else."""
    bin_dir = tmp_path_factory.mktemp("node-bin")
    os.symlink(sys.executable, bin_dir / "python3")
    return str(bin_dir)


def test_a_healthy_node_passes_with_exit_0():
    rc, doc = verdict()
    assert rc == 0
    assert doc["overall_severity"] == "PASS" and doc["healthy"] is True and doc["problem"] is None
    assert doc["recommended_action"] == "NONE" and doc["affected_components"] == []
    assert doc["reason"].startswith("inductor-doctor: compile stack PASS")
    assert {c["check_id"] for c in doc["checks"]} <= set(ONLY.split(","))


def test_a_node_without_a_compiler_is_a_node_problem_to_drain(no_compiler_path):
    rc, doc = verdict({"PATH": no_compiler_path, "CXX": None, "CC": None})
    assert rc == 1
    assert doc["overall_severity"] == "CRITICAL" and doc["healthy"] is False
    assert doc["problem"] == "node" and doc["recommended_action"] == "DRAIN"
    assert doc["reason"].startswith("[node_problem] inductor-doctor: cxx-compiler-missing on cpu: ")
    assert "\n" not in doc["reason"] and len(doc["reason"]) <= 200
    [check] = [c for c in doc["checks"] if c["check_id"] == "cxx-compiler-missing"]
    assert check["severity"] == "CRITICAL" and check["fails"] is True and check["recommended_action"]
    assert doc["affected_components"][0]["category"] == "compile-stack"
    assert "cxx-compiler-missing" in doc["affected_components"][0]["check_ids"]


def test_the_jobs_own_settings_are_a_user_problem(tmp_path):
    """`CXX` and `TORCHINDUCTOR_CACHE_DIR` set by the job to nothing usable: the node is fine for
    anyone else, so the problem is the user's, and the action is to tell them, not to drain."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    rc, doc = verdict({"CXX": "/nonexistent/g++", "TORCHINDUCTOR_CACHE_DIR": str(not_a_dir / "cache")})
    assert rc == 1
    assert doc["problem"] == "user" and doc["recommended_action"] == "NOTIFY_USER"
    assert doc["reason"].startswith("[user_problem] inductor-doctor: ")
    assert doc["reason"].endswith("(+1 more: inductor-doctor check)")
    failing = {c["check_id"]: c["problem"] for c in doc["checks"] if c["fails"]}
    assert failing == {"cxx-compiler-missing": "user", "cache-dir-unwritable": "user"}


def test_policy_suppressions_and_usage(no_compiler_path):
    env = {"PATH": no_compiler_path, "CXX": None, "CC": None}
    rc, doc = verdict(env, "--suppress", "cxx-compiler-missing")
    assert rc == 0 and doc["healthy"] is True and doc["recommended_action"] == "NONE"
    [check] = [c for c in doc["checks"] if c["check_id"] == "cxx-compiler-missing"]
    assert check["severity"] == "INFO" and check["fails"] is False
    rc, doc = verdict(env, "--fail-on", "never")
    assert rc == 0 and doc["overall_severity"] == "CRITICAL" and doc["recommended_action"] == "REVIEW"
    proc = run_cli(["check", "--distributed", "--format", "node-verdict"], env={"RANK": "0"})
    assert proc.returncode == 2 and "one node's verdict" in proc.stderr


def _report(*findings: Finding, **meta: Any) -> Report:
    return Report("check", {"host": {"hostname": "node7"}, "env": {"CUDA_VISIBLE_DEVICES": ""}},
                  list(findings), "0.1.0", "2026.11.22", dict(meta))


def _finding(id_: str, status: Status, severity: Severity = Severity.ERROR, reason: str = "why") -> Finding:
    return Finding(id_, id_, "cuda", status, Basis.STATIC, reason, severity)


def test_severities_follow_the_findings_and_failure_follows_the_policy():
    report = _report(_finding("a", Status.LIKELY), _finding("b", Status.INCONCLUSIVE),
                     _finding("c", Status.AFFECTED, Severity.WARNING), _finding("d", Status.OK),
                     _finding("e", Status.NOT_APPLICABLE))
    doc = node_verdict(report, (FailOn.AFFECTED, False)).to_dict()
    validate("node-verdict", doc)
    assert {c["check_id"]: c["severity"] for c in doc["checks"]} == {
        "a": "WARNING", "b": "UNKNOWN", "c": "WARNING", "d": "PASS"}
    assert doc["overall_severity"] == "UNKNOWN" and doc["healthy"] and doc["recommended_action"] == "REVIEW"
    strict = node_verdict(report, (FailOn.INCONCLUSIVE, True))
    assert strict.exit_code((FailOn.INCONCLUSIVE, True)) == 1
    assert {c["check_id"] for c in strict.to_dict()["checks"] if c["fails"]} == {"a", "b", "c"}
    hidden = _report(_finding("cuda-devices-hidden", Status.AFFECTED,
                              reason="CUDA_VISIBLE_DEVICES='' hides all of the driver's 8 GPUs"))
    doc = node_verdict(hidden, (FailOn.AFFECTED, False)).to_dict()
    assert doc["problem"] == "user" and doc["reason"].startswith("[user_problem] inductor-doctor: "
                                                                 "cuda-devices-hidden on cuda: ")


def test_an_interrupted_check_is_unknown():
    doc = node_verdict(_report(_finding("a", Status.OK), interrupted=True, exit_code=143),
                       (FailOn.AFFECTED, False))
    assert doc.exit_code((FailOn.AFFECTED, False)) == 143
    data = doc.to_dict()
    validate("node-verdict", data)
    assert data["overall_severity"] == "UNKNOWN" and data["healthy"] is False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))

