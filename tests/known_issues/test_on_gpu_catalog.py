"""The GPU/CUDA catalog on a real GPU host: `pytest -m gpu tests/known_issues/test_on_gpu_catalog.py`.

Skipped without a GPU. Each state is made for real in the CLI's environment (CUDA_VISIBLE_DEVICES,
LOCAL_RANK, no toolkit), and the probe's view is compared with what the same interpreter's torch
reports in that state: the GPUs it counts, its arch list, its CUDA_HOME, the libraries it maps.
tests/gpu_states.sh prints the same states as a matrix for a person to read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Dict, List

import pytest
from conftest import has_cuda, run_json

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not has_cuda(), reason="no NVIDIA GPU here")]


def torch_says(code: str, env: Dict[str, str]) -> str:
    full = dict(os.environ)
    full.update(env)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=full,
                          cwd="/")
    if proc.returncode != 0 and "import torch" in code and "No module named 'torch'" in proc.stderr:
        pytest.skip(f"{sys.executable} has no torch")
    return proc.stdout.strip()


def check(env: Dict[str, str], only: List[str]) -> dict:
    args = ["check", "--static", "--no-cache"]
    for id_ in only:
        args += ["--only", id_]
    return run_json(args, env={k: v for k, v in env.items() if v is not None}, timeout=600)


def rows(report: dict, id_: str) -> Dict[str, dict]:
    return {r["device"]: r for r in report["results"] if r["id"] == id_}


@pytest.fixture(scope="module")
def gpu_count() -> int:
    n = torch_says("import torch; print(torch.cuda.device_count())", {"CUDA_VISIBLE_DEVICES": None})
    if not n.isdigit() or int(n) == 0:
        pytest.skip(f"{sys.executable}'s torch sees no GPU")
    return int(n)


@pytest.mark.parametrize("value", ["", "7", "0,0", "-1", "GPU-deadbeef", "0", "0,7", "1gpu"])
def test_cuda_rows_are_the_gpus_torch_sees(value, gpu_count):
    env = {"CUDA_VISIBLE_DEVICES": value}
    torch_count = int(torch_says("import torch; print(torch.cuda.device_count())", env))
    report = check(env, ["cuda-devices-hidden", "gpu-too-old-for-triton", "torch-gpu-arch-missing"])
    devices = sorted({r["device"] for r in report["results"]})
    assert devices == ([f"cuda:{i}" for i in range(torch_count)] or ["cuda"])
    hidden = rows(report, "cuda-devices-hidden")
    if torch_count == 0:
        assert hidden["cuda"]["status"] == "affected"
        assert rows(report, "gpu-too-old-for-triton")["cuda"]["status"] == "not-applicable"
    assert report["environment"]["cuda"]["driver_gpus"], "the driver's list is kept"


def test_local_rank_beyond_the_visible_gpus(gpu_count):
    report = check({"LOCAL_RANK": str(gpu_count), "CUDA_VISIBLE_DEVICES": None}, ["cuda-devices-hidden"])
    assert all(r["status"] == "affected" and "LOCAL_RANK" in r["reason"] for r in report["results"])
    report = check({"LOCAL_RANK": "0", "CUDA_VISIBLE_DEVICES": None}, ["cuda-devices-hidden"])
    assert all(r["status"] == "ok" for r in report["results"])


def test_arch_list_and_verdict_agree_with_torch(gpu_count):
    said = json.loads(torch_says("import torch, json; print(json.dumps(torch.cuda.get_arch_list()))", {}))
    report = run_json(["probe", "--live"], timeout=600)
    assert report["environment"]["torch"]["cuda_arch_list"] == said
    checked = check({}, ["torch-gpu-arch-missing", "cuda-driver-too-old", "triton-shared-memory"])
    for r in checked["results"]:
        assert r["status"] in ("ok", "likely", "not-applicable"), r  # a GPU torch runs on is not affected


def test_toolkit_is_found_where_torch_finds_it(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    for env in ({}, {"PATH": f"{bindir}:/usr/bin:/bin", "CUDA_HOME": None, "CUDA_PATH": None},
                {"CUDA_HOME": "/nonexistent"}):
        said = torch_says("from torch.utils.cpp_extension import CUDA_HOME; print(CUDA_HOME)", env)
        report = run_json(["probe"], env={k: v for k, v in env.items() if v is not None}, timeout=300)
        assert str(report["environment"]["toolkit"]["cuda_home"]) == said.splitlines()[-1]


def test_the_live_probe_maps_the_libraries_the_replay_predicts(gpu_count):
    report = run_json(["probe", "--live"], timeout=600)
    libs = report["environment"]["cuda"]["libs"]
    compared = [x for x in libs if x.get("loaded")]
    assert compared, libs
    for x in compared:
        assert os.path.realpath(x["loaded"]) == os.path.realpath(x["resolved"]), x
