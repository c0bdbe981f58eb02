"""`plan` knows which torch build it plans, and judges the torch ↔ Triton pair from each release's pin.

A CPU-only build (`+cpu`, PyTorch's CPU index, a macOS host) has no GPU: no GPU-only issue may be
predicted for it, and a Docker build gated on `plan` must not fail on one. A Triton that is not the
one a torch release's wheel requires is a skew for every release, not only the pairs of one bug.
Everything runs through the real command line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from conftest import run_cli


def plan(*args: str) -> Tuple[int, Dict[str, Tuple[str, str]], dict]:
    proc = run_cli(["plan", *args, "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    rows = {(r["id"], r["device"]): (r["status"], r["reason"]) for r in doc["results"]}
    return proc.returncode, {k[0]: v for k, v in rows.items()}, doc


def gpu_predictions(rows: Dict[str, Tuple[str, str]], doc: dict) -> List[str]:
    return [r["id"] for r in doc["results"]
            if r["device"] == "cuda" and r["status"] in ("affected", "likely")]


@pytest.mark.parametrize("args", [
    ["torch==2.5.1+cpu"],
    ["torch==2.5.1", "--index-url", "https://download.pytorch.org/whl/cpu"],
    ["torch==2.5.1", "--index-url", "https://download.pytorch.org/whl/cpu/", "--gpu", "sm_120"],
])
def test_a_cpu_only_build_predicts_no_gpu_issue(args):
    rc, rows, doc = plan(*args)
    assert rc == 0, rows
    assert gpu_predictions(rows, doc) == []
    status, reason = rows["triton-constexpr-dynamic"]
    assert status == "not-applicable" and "CPU-only" in reason
    assert doc["environment"]["torch"]["build"] == "cpu"
    assert "triton" not in doc["environment"]["plan"]["packages"], "a CPU wheel requires no Triton"


def test_the_cpu_index_in_a_requirements_file_decides_the_build(tmp_path: Path):
    req = tmp_path / "requirements.txt"
    req.write_text("--index-url https://download.pytorch.org/whl/cpu\ntorch==2.5.1\n")
    proc = run_cli(["plan", "-r", str(req)])
    assert proc.returncode == 0, proc.stdout
    assert "torch 2.5.1 (CPU-only)" in proc.stdout
    assert "triton-constexpr-dynamic" not in proc.stdout.split("more cannot arise")[0]


def test_the_same_release_from_pypi_on_linux_still_predicts_the_gpu_bug():
    rc, rows, _ = plan("torch==2.5.1", "--python-version", "3.11")
    assert rc == 1 and rows["triton-constexpr-dynamic"][0] == "affected"
    rc, rows, _ = plan("torch==2.5.1+cu124")
    assert rc == 1 and rows["triton-constexpr-dynamic"][0] == "affected"


@pytest.mark.parametrize("torch, triton, want, words", [
    ("2.13.0", "3.0.0", "affected", "requires triton==3.7.1"),
    ("2.5.1", "3.0.0", "affected", "requires triton==3.1.0"),
    ("2.6.0", "3.3.0", "affected", "AttrsDescriptor"),
    ("2.5.1", "3.1.0", "ok", "is the release torch 2.5.1 requires"),
    ("2.14.1", "3.8.0", "ok", "triton~=3.8.0"),
])
def test_skew_covers_every_pair_from_each_releases_pin(torch, triton, want, words):
    rc, rows, _ = plan(f"torch=={torch}", f"triton=={triton}", "--python-version", "3.12")
    status, reason = rows["triton-version-skew"]
    assert status == want and words in reason, reason
    if want == "affected":
        assert rc == 1, "a skew the plan predicts fails the gate"


def test_skew_of_a_range_is_what_pip_would_pick():
    # pip backtracks to a torch whose pin the Triton meets: no skew.
    _, rows, _ = plan("torch>=2.12", "triton==3.7.1", "--python-version", "3.12")
    assert rows["triton-version-skew"][0] == "ok"
    # A CPU-only torch requires no Triton: nothing stops the AttrsDescriptor pair.
    _, rows, _ = plan("torch>=2.6,<2.8", "triton==3.3.0", "--index-url", "https://download.pytorch.org/whl/cpu")
    assert rows["triton-version-skew"][0] == "likely"
    _, rows, _ = plan("torch==2.13.0+cpu", "triton==3.0.0")
    assert rows["triton-version-skew"][0] == "ok"
    # A GPU torch's own pin keeps the AttrsDescriptor pair out: pip never installs it.
    _, rows, _ = plan("torch>=2.4,<2.7", "triton", "--python-version", "3.12")
    assert rows["triton-version-skew"][0] == "ok", rows["triton-version-skew"]


# --- the wheel's own facts: CUDA runtime and GPU architectures, predicted from a spec alone ----------


def test_arch_and_driver_are_predicted_from_the_spec_alone():
    rc, rows, doc = plan("torch==2.6.0", "--gpu", "sm_120", "--driver", "550.54")
    status, reason = rows["torch-gpu-arch-missing"]
    assert status == "affected" and "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" in reason, reason
    status, reason = rows["cuda-driver-too-old"]
    assert status == "ok" and "CUDA 12.4" in reason and "minor-version compatibility" in reason, reason
    assert doc["environment"]["torch"]["cuda"] == "12.4" and rc == 1


def test_a_cuda13_wheel_on_a_525_driver_is_predicted():
    rc, rows, _ = plan("torch==2.13.0", "--gpu", "sm_90", "--driver", "525.60.13")
    status, reason = rows["cuda-driver-too-old"]
    assert status == "affected" and "580.65.06" in reason and "CUDA 13.0" in reason, reason
    assert rows["torch-gpu-arch-missing"][0] == "ok"
    assert rc == 1


@pytest.mark.parametrize("torch, gpu, want", [
    ("2.9.1", "sm_61", "affected"),   # cu128: sm_70 and up
    ("2.7.1", "sm_61", "ok"),         # cu126: sm_60's cubin runs on sm_61
    ("2.13.0", "sm_70", "affected"),  # cu130: sm_75 and up
    ("2.10.0", "sm_70", "ok"),
    ("2.9.1+cu128", "sm_120", "ok"),
])
def test_each_release_has_its_own_arch_list(torch, gpu, want):
    _, rows, _ = plan(f"torch=={torch}", "--gpu", gpu)
    assert rows["torch-gpu-arch-missing"][0] == want, rows["torch-gpu-arch-missing"]


def test_a_variant_the_snapshot_did_not_read_is_inconclusive_not_ok():
    _, rows, _ = plan("torch==2.9.1+cu126", "--gpu", "sm_90")
    status, reason = rows["torch-gpu-arch-missing"]
    assert status == "inconclusive" and "not in the release snapshot" in reason
