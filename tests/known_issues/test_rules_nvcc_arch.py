"""nvcc-too-old-for-arch: the local nvcc against the GPU's architecture and the arch lists asked.

On recorded facts: nvcc's own `--list-gpu-arch` answers (CUDA 12.6's stops at compute_90, 12.8's at
compute_120; 13.0's starts at compute_75, read here from the real nvcc) against the GPUs users had
(an RTX 5090, a DGX Spark's sm_121, a V100). For real, where this machine has an nvcc: its refusal of
an architecture it does not list is what triage calls this issue, and the rule, through the CLI with
a CUDA torch's venv, says `affected` for a TORCH_CUDA_ARCH_LIST entry it cannot compile for and `ok`
for one it can. No GPU here: tests/gpu_states.sh runs the check against a real one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import List, Optional

import pytest
from conftest import run_cli, venv_python
from test_rules_environment import h100, make_facts, only

from inductor_doctor.core.facts import CudaToolkitInfo, GPUInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.probe.cuda_toolkit import nvcc_archs
from inductor_doctor.triage.engine import EXACT, LogInput, triage_text

ID = "nvcc-too-old-for-arch"

CUDA_12_6 = ["compute_50", "compute_52", "compute_53", "compute_60", "compute_61", "compute_62", "compute_70",
             "compute_72", "compute_75", "compute_80", "compute_86", "compute_87", "compute_89", "compute_90"]
CUDA_12_8 = CUDA_12_6 + ["compute_100", "compute_101", "compute_120"]
CUDA_13_0 = ["compute_75", "compute_80", "compute_86", "compute_87", "compute_88", "compute_89", "compute_90",
             "compute_100", "compute_110", "compute_103", "compute_120", "compute_121"]
RTX_5090 = GPUInfo(index=0, name="NVIDIA GeForce RTX 5090", sm="12.0")
GB10 = GPUInfo(index=0, name="NVIDIA GB10", sm="12.1")
V100 = GPUInfo(index=0, name="Tesla V100-SXM2-16GB", sm="7.0")


def facts(archs: List[str], version: str, gpus: List[GPUInfo], env: Optional[dict] = None):
    f = make_facts(torch_version="2.9.0+cu128", cuda="12.8", gpus=gpus)
    f.toolkit = CudaToolkitInfo(cuda_home="/usr/local/cuda", source="CUDA_HOME", cuda_home_exists=True,
                                nvcc="/usr/local/cuda/bin/nvcc", nvcc_version=version, nvcc_archs=list(archs))
    f.env = dict(env or {})
    return f


def test_an_nvcc_older_than_the_gpu_is_affected():
    o = only(ID, facts(CUDA_12_6, "12.6", [RTX_5090]))
    assert o.status is Status.AFFECTED
    assert "sm_120" in o.reason and "compute_50 to compute_90" in o.reason and "compute_120" in o.reason


def test_a_cuda_13_nvcc_on_a_volta_is_affected():
    o = only(ID, facts(CUDA_13_0, "13.0", [V100]))
    assert o.status is Status.AFFECTED and "sm_70" in o.reason


def test_an_earlier_minor_of_the_same_generation_is_likely():
    """nvcc 12.8 stops at compute_120: sm_120 code runs on a GB10 (sm_121), a build for sm_121 fails."""
    o = only(ID, facts(CUDA_12_8, "12.8", [GB10]))
    assert o.status is Status.LIKELY and "sm_121" in o.reason and "sm_120 code runs there" in o.reason


def test_an_nvcc_that_knows_every_gpu_is_ok():
    o = only(ID, facts(CUDA_12_8, "12.8", [RTX_5090, h100(1)]))
    assert o.status is Status.OK and "sm_120" in o.reason and "sm_90" in o.reason


@pytest.mark.parametrize("name, value, bad", [
    ("TORCH_CUDA_ARCH_LIST", "8.0;9.0;12.0+PTX", "12.0+PTX"),
    ("FLASHINFER_CUDA_ARCH_LIST", "8.7 11.0a", "11.0a"),  # dusty-nv/jetson-containers#1457, on an Orin
])
def test_an_arch_list_asking_for_what_nvcc_lacks_is_affected_without_a_gpu(name, value, bad):
    o = only(ID, facts(CUDA_12_6, "12.6", [], {name: value}))
    assert o.status is Status.AFFECTED and bad in o.reason and name in o.reason


def test_nothing_to_judge():
    assert only(ID, facts(CUDA_12_6, "12.6", [])).status is Status.NOT_APPLICABLE  # no GPU, no list
    no_nvcc = facts([], "12.6", [RTX_5090])
    no_nvcc.toolkit.nvcc = None
    assert only(ID, no_nvcc).status is Status.NOT_APPLICABLE
    assert only(ID, facts([], "10.2", [RTX_5090])).status is Status.INCONCLUSIVE  # no --list-gpu-arch
    assert only(ID, make_facts()).status is Status.NOT_APPLICABLE  # a CPU-only torch


# --- this machine's nvcc, for real --------------------------------------------------------------------

NVCC = shutil.which("nvcc") or next((str(p) for p in Path("/usr/local").glob("cuda*/bin/nvcc")), None)
#: Architectures that existed, oldest first: one below what this nvcc lists is one it dropped.
REAL = [35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75]


def dropped(archs: List[str]) -> Optional[int]:
    listed = {int("".join(c for c in a.split("_")[1] if c.isdigit())) for a in archs}
    below = [a for a in REAL if a < min(listed)]
    return below[-1] if below else None


@pytest.fixture(scope="module")
def real_nvcc():
    if NVCC is None:
        pytest.skip("no nvcc on this machine")
    archs = nvcc_archs(NVCC)
    old = dropped(archs)
    if not archs or old is None:
        pytest.skip(f"{NVCC} lists no architecture, or none older than it dropped")
    return NVCC, archs, old


def test_the_real_nvcc_refusal_is_this_issue(real_nvcc, tmp_path):
    nvcc, _archs, old = real_nvcc
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    proc = subprocess.run([nvcc, f"-gencode=arch=compute_{old},code=sm_{old}", "-c", str(src), "-o",
                           str(tmp_path / "k.o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and f"Unsupported gpu architecture 'compute_{old}'" in proc.stderr
    data = proc.stderr.encode()
    result = triage_text(LogInput("nvcc", data, len(data)), list(registry()))
    assert {m.issue.id: m.confidence for m in result.matched} == {ID: EXACT}


@pytest.mark.envs
def test_check_through_the_cli_with_a_cuda_torch(real_nvcc, tmp_path):
    """The probe asks the real nvcc; TORCH_CUDA_ARCH_LIST names an architecture it dropped, then one
    it has."""
    nvcc, archs, old = real_nvcc
    python = venv_python("torch-2.9-nodeps")  # torch 2.9.0 (CUDA 12.8) installed with --no-deps
    home = str(Path(nvcc).resolve().parents[1])
    env = {"CUDA_HOME": home, "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}

    def row(arch_list: str) -> dict:
        proc = run_cli(["check", "--static", "--only", ID, "--python", python, "--format", "json"],
                       env={**env, "TORCH_CUDA_ARCH_LIST": arch_list})
        found = [r for r in json.loads(proc.stdout)["results"] if r["id"] == ID]
        assert found, proc.stderr[-2000:]
        return found[0]

    bad = row(f"{old // 10}.{old % 10}")
    assert bad["status"] == "affected" and f"{old // 10}.{old % 10}" in bad["reason"], bad
    newest = max(archs, key=lambda a: int("".join(c for c in a.split("_")[1] if c.isdigit())))
    n = int("".join(c for c in newest.split("_")[1] if c.isdigit()))
    good = row(f"{n // 10}.{n % 10}")
    assert good["status"] == "ok", good  # no GPU here: the list alone is judged
