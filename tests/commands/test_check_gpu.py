"""`check --gpu`: a column per GPU that is not here, as a user runs it (docs/cross-target.md).

Here with the test interpreter, which has no Triton: the rows a compile decides say that nothing
compiles for the GPU here, and the options' usage errors are one line. The compiles themselves, with
real Triton releases, are tests/known_issues/test_cross_target.py (-m envs).
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import run_cli, run_json

from inductor_doctor.schemas import validate


@pytest.mark.parametrize("args,says", [
    (["--gpu", "h100"], "--gpu 'h100': expected an NVIDIA compute capability such as sm_90"),
    (["--driver", "570.86.15"], "--driver describes the GPUs named by --gpu"),
    (["--gpu", "sm_80", "--driver", "57x"], "--driver '57x'"),
])
def test_bad_targets_are_one_line_usage_errors(args, says):
    proc = run_cli(["check", "--static", *args])
    assert proc.returncode == 2 and not proc.stdout, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines


@pytest.mark.skipif(importlib.util.find_spec("triton") is not None, reason="this interpreter has Triton")
def test_a_column_per_target_and_without_triton_nothing_compiles():
    doc = run_json(["check", "--static", "--no-cache", "--gpu", "sm_80", "--gpu", "gfx942",
                    "--only", "ptxas-unsupported-arch,gpu-dtype-unsupported,triton-shared-memory"])
    validate("check", doc)
    rows = {(r["id"], r["device"]): r for r in doc["results"]}
    assert ("ptxas-unsupported-arch", "gfx942") not in rows  # an assembler of CUDA's: not an AMD row
    for key in [("ptxas-unsupported-arch", "sm_80"), ("gpu-dtype-unsupported", "sm_80"),
                ("gpu-dtype-unsupported", "gfx942"), ("triton-shared-memory", "gfx942")]:
        row = rows[key]
        assert row["status"] == "not-applicable" and "nothing compiles for" in row["reason"], row
        assert row.get("proved") in (None, "compiled")  # never "ran": no GPU here


def test_the_gpus_come_from_the_environment_too():
    proc = run_cli(["check", "--static", "--only", "gpu-too-old-for-triton", "--format", "json"],
                   env={"INDUCTOR_DOCTOR_GPU": "sm_61 sm_90"})
    assert proc.returncode in (0, 1), proc.stderr
    import json

    devices = {r["device"] for r in json.loads(proc.stdout)["results"]}
    assert {"sm_61", "sm_90"} <= devices, devices
