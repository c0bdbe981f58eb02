"""extension-torch-mismatch on real wheels beside torch 2.13.0+cpu, in the venvs
tests/envs/build_extensions.sh builds: the whole check, the probe's static verdict and the canary's
import, through the CLI. `pytest -m envs` runs them.
"""

from __future__ import annotations

from typing import Dict

import pytest
from conftest import run_json, venv_python

from inductor_doctor.schemas import validate

pytestmark = pytest.mark.envs
ID = "extension-torch-mismatch"


def row(python: str, *extra: str) -> Dict:
    data = run_json(["check", "--only", ID, "--python", python, "--no-cache", *extra], timeout=600)
    validate("check", data)
    found = [r for r in data["results"] if r["id"] == ID]
    assert len(found) == 1, data["results"]
    return found[0]


def test_wheels_built_for_older_and_cuda_torches_are_affected_and_the_canary_reproduces_it():
    py = venv_python("ext-older")
    static = row(py, "--static")
    assert (static["status"], static["basis"]) == ("affected", "static"), static
    assert "fbgemm-gpu-cpu 1.3.0" in static["reason"] and "_ZNR5torch7Library4_def" in static["reason"]
    assert "torchao 0.15.0" in static["reason"] and "libc10_cuda.so" in static["reason"]
    assert "torchvision 0.29.1" in static["reason"]
    live = row(py)
    assert live["status"] == "affected" and "canary reproduced it" in live["reason"], live
    evidence = " ".join(live["evidence"]) + live["reason"]
    assert "undefined symbol" in evidence or "does not exist" in evidence, evidence


def test_a_wheel_built_for_a_newer_torch_is_affected():
    static = row(venv_python("ext-newer"), "--static")
    assert static["status"] == "affected", static
    assert "fbgemm-gpu-cpu 1.9.0" in static["reason"], static["reason"]
    assert "_ZN5torch8autograd13_wrap_outputs" in static["reason"]


def test_the_release_built_for_this_torch_is_ok_by_its_canary():
    live = row(venv_python("ext-paired"))
    assert (live["status"], live["basis"]) == ("ok", "canary"), live
    assert "imported fbgemm-gpu-cpu 1.8.0" in live["reason"], live["reason"]


def test_bitsandbytes_that_imports_triton_ops_is_affected_beside_triton_3_7_and_the_fixed_release_ok():
    def triton_row(env: str) -> Dict:
        data = run_json(["check", "--static", "--only", "triton-api-removed", "--python", venv_python(env),
                         "--no-cache"], timeout=300)
        return data["results"][0]

    old = triton_row("triton-api-old")
    assert (old["status"], old["basis"]) == ("affected", "static"), old
    assert "bitsandbytes 0.44.1 imports triton.ops.matmul_perf_model" in old["reason"]
    assert "(gone in 3.2.0)" in old["reason"]
    new = triton_row("triton-api-new")
    assert new["status"] == "ok" and "bitsandbytes 0.45.5" in new["reason"], new
