"""`inductor-doctor plan` as users run it: the real knowledge base, the real CLI, exit codes, JSON.

The acceptance cases of the command: torch/torch_xla 2.5.1 hit the constexpr and donor-hash bugs,
2.6.0 clears both; clang++-19 with torch 2.9 hits the const_data_ptr mangling skew, which the
compat flag or torch >= 2.12 clear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from conftest import run_cli

from inductor_doctor.commands.plan import run_plan
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.plan.resolve import PlanRequest
from inductor_doctor.schemas import validate


def need(*ids: str) -> None:
    """Seed ids are the contract's: missing is a failure in CI, a skip while they are written."""
    missing = [i for i in ids if registry().find(i) is None]
    if missing:
        msg = f"seed issues {missing} are not registered (the contract names them)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


def statuses(*specs: str, **kw) -> Dict[str, Status]:
    report = run_plan(PlanRequest(specs=list(specs), **kw))
    return {f.id: f.status for f in report.findings}


def test_torch_and_xla_2_5_1_predict_constexpr_and_donor_hash():
    need("triton-constexpr-dynamic", "xla-donor-hash")
    s = statuses("torch==2.5.1", "torch_xla==2.5.1")
    assert s["triton-constexpr-dynamic"] in (Status.AFFECTED, Status.LIKELY)
    assert s["xla-donor-hash"] in (Status.AFFECTED, Status.LIKELY)


def test_torch_and_xla_2_6_0_predict_neither():
    need("triton-constexpr-dynamic", "xla-donor-hash")
    s = statuses("torch==2.6.0", "torch_xla==2.6.0")
    assert s["triton-constexpr-dynamic"] not in (Status.AFFECTED, Status.LIKELY)
    assert s["xla-donor-hash"] not in (Status.AFFECTED, Status.LIKELY)


@pytest.mark.parametrize(
    "specs, cxx, flags, predicted",
    [
        (["torch==2.9.0"], "clang++-19", None, True),
        (["torch==2.9.0"], "/usr/bin/clang++-18", None, True),
        (["torch==2.9.0"], "clang++-19", "-O2 -fclang-abi-compat=17", False),
        (["torch==2.9.0"], "clang++-19", "-fclang-abi-compat=17 -fclang-abi-compat=18", True),
        (["torch==2.12.0"], "clang++-19", None, False),
        (["torch==2.13.0"], "clang++-19", None, False),
        (["torch>=2.12"], "clang++-19", None, False),
        (["torch>=2.10"], "clang++-19", None, True),  # 2.10 and 2.11 still declare enable_if
        (["torch==2.9.0"], "clang++-17", None, False),
        (["torch==2.9.0"], "g++-13", None, False),
        (["torch==2.9.0"], None, None, False),
    ],
)
def test_const_data_ptr_abi_prediction(specs, cxx, flags, predicted):
    need("const-data-ptr-abi")
    s = statuses(*specs, cxx=cxx, cxxflags=flags)
    assert (s["const-data-ptr-abi"] in (Status.AFFECTED, Status.LIKELY)) is predicted, s["const-data-ptr-abi"]


def test_cli_exit_codes_and_one_line_errors(tmp_path: Path):
    need("triton-constexpr-dynamic")
    assert run_cli(["plan", "torch==2.5.1"]).returncode == 1
    assert run_cli(["plan", "torch==2.13.0"]).returncode == 0
    for args in (["plan", "torch==abc"], ["plan", "-r", str(tmp_path / "missing.txt")], ["plan"]):
        proc = run_cli(args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == "", "nothing half-printed"
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    bad = tmp_path / "requirements.txt"
    bad.write_text("numpy\ntorch=2.5.1\n")
    proc = run_cli(["plan", "-r", str(bad)])
    assert proc.returncode == 2 and f"{bad}:2:" in proc.stderr


def test_cli_json_follows_the_schema(tmp_path: Path):
    req = tmp_path / "requirements.txt"
    req.write_text("--extra-index-url https://download.pytorch.org/whl/cu124\ntorch>=2.4,<2.7\n")
    proc = run_cli(["plan", "-r", str(req), "--cxx", "clang++-19", "--gpu", "sm_90", "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    validate("plan", doc)
    assert doc["schema"] == "inductor-doctor/plan/v1"
    assert doc["meta"]["predicted"] is (proc.returncode == 1)
    assert doc["environment"]["plan"]["packages"]["torch"]["versions"][0] == "2.4.0"
    # predicted from versions, except what the --cxx compiler answered where it is on this machine
    assert all(r["basis"] == "version" or r["reason"].startswith("probed here: ") for r in doc["results"])
    assert all(r["answer"] in ("predicted", "cannot-arise", "cannot-be-predicted") for r in doc["results"])


def test_cli_env_variables_and_output_file(tmp_path: Path):
    out = tmp_path / "plan.json"
    proc = run_cli(
        ["plan", "torch==2.9.0", "--output", str(out)],
        env={"INDUCTOR_DOCTOR_FORMAT": "json", "INDUCTOR_DOCTOR_CXX": "clang++-19"},
    )
    doc = json.loads(out.read_text())
    assert doc["environment"]["cxx"]["command"] == "clang++-19"
    assert proc.returncode == (1 if doc["meta"]["predicted"] else 0)


def test_plan_never_imports_torch():
    code = (
        "import sys; from inductor_doctor.cli import main; rc = main(['plan', 'torch==2.5.1', "
        "'torch_xla==2.5.1', '--cxx', 'clang++-19', '--format', 'json']); "
        "bad = [m for m in ('torch', 'triton', 'torch_xla') if m in sys.modules]; "
        "sys.stderr.write(repr(bad)); sys.exit(9 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-500:]
