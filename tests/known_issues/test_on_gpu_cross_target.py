"""On a GPU host: the cross-target verdict for this GPU agrees with the native check, row by row.

`pytest -m gpu tests/known_issues/test_on_gpu_cross_target.py` (tests/gpu_pass.sh, part `cross`). Skipped
without a GPU. The native check runs the canaries on cuda:0 (the live probe, the GPU's own limits); the
cross-target check runs as a `docker build` would, with the GPU hidden (CUDA_VISIBLE_DEVICES="") and
the same GPU named by `--gpu sm_XX --driver VER` (its compute capability and driver, from nvidia-smi):
Triton and its ptxas compile the canary kernels for it, and nothing runs on it. Every issue that judges
a GPU that is not here must come out the same on both, status for status; the cross-target rows say
they were compiled, the native ones that they ran (or were decided by a rule).
"""

from __future__ import annotations

import subprocess
from typing import Dict, List, Tuple

import pytest
from conftest import has_cuda, run_json

from inductor_doctor.kb import registry

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not has_cuda(), reason="no NVIDIA GPU here")]


def smi(field: str) -> str:
    proc = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip().splitlines()[0].strip()


CROSS = sorted(i.id for i in registry() if i.cross is not None)


def only(ids: List[str]) -> List[str]:
    return [a for i in ids for a in ("--only", i)]


@pytest.fixture(scope="module")
def both() -> Tuple[str, Dict[str, dict], Dict[str, dict]]:
    """(this GPU as --gpu names it, the native rows of cuda:0, the cross-target rows of that name)."""
    sm = "sm_" + smi("compute_cap").replace(".", "")
    driver = smi("driver_version")
    native = run_json(["check", "--no-cache", "-q", "--fail-on", "never", *only(CROSS)],
                      env={"CUDA_VISIBLE_DEVICES": "0"}, timeout=1800)
    cross = run_json(["check", "--static", "--no-cache", "-q", "--fail-on", "never", "--gpu", sm,
                      "--driver", driver, *only(CROSS)], env={"CUDA_VISIBLE_DEVICES": ""}, timeout=1800)
    return (sm, {r["id"]: r for r in native["results"] if r["device"] == "cuda:0"},
            {r["id"]: r for r in cross["results"] if r["device"] == sm})


@pytest.mark.parametrize("issue_id", CROSS)
def test_the_cross_target_verdict_agrees_with_the_native_one(both, issue_id):
    sm, natives, crosses = both
    native, cross = natives.get(issue_id), crosses.get(issue_id)
    assert native is not None and cross is not None, (issue_id, native, cross)
    assert cross["status"] == native["status"], (
        f"{issue_id} on {sm}: cross-target {cross['status']} ({cross['reason']}) but native "
        f"{native['status']} ({native['reason']})")
    if cross["basis"] == "canary":
        assert cross.get("proved") == "compiled"
        assert cross["status"] != "ok" or "unproven" in cross["reason"]
    if native["basis"] == "canary":
        assert native.get("proved") == "ran"
