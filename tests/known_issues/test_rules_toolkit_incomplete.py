"""cuda-toolkit-incomplete: a toolkit with nvcc and the runtime's headers but not the math libraries'.

Read for real: the headers torch's ATen/cuda/CUDAContextLight.h includes, from the installed torch here
and a cached CUDA torch; this machine's CUDA 13.0 toolkit, which has no math library headers, through the
CLI; and the real compile of a file including torch's CUDAContext.h against it, whose error triage calls
this issue. On recorded facts: the verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import ENVS, run_cli, venv_python
from test_rules_environment import SYSTEM_TORCH, make_facts, only

from inductor_doctor.core.facts import CudaToolkitInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.probe.cuda_toolkit import extension_headers
from inductor_doctor.triage.engine import EXACT, LogInput, triage_text

ID = "cuda-toolkit-incomplete"
TORCH_HEADERS = ["cusparse.h", "cublas_v2.h", "cublasLt.h", "cusolverDn.h"]
CUDA_TORCH = ENVS / "torch-2.9-nodeps" / "lib" / "python3.11" / "site-packages" / "torch"
TOOLKIT = Path("/usr/local/cuda")


def test_torch_names_the_library_headers_its_extensions_include():
    """torch 2.13 wraps the header in `#if !defined(TORCH_STABLE_ONLY) ...` and keeps cudss.h under
    USE_CUDSS: both read as a CUDA build of an extension sees them."""
    assert extension_headers(str(SYSTEM_TORCH)) == TORCH_HEADERS
    if CUDA_TORCH.is_dir():
        assert extension_headers(str(CUDA_TORCH)) == TORCH_HEADERS


def facts(missing, headers=TORCH_HEADERS, runtime="/usr/local/cuda/include/cuda_runtime.h"):
    f = make_facts(torch_version="2.9.0+cu128", cuda="12.8")
    f.toolkit = CudaToolkitInfo(cuda_home="/usr/local/cuda", source="CUDA_HOME", cuda_home_exists=True,
                                nvcc="/usr/local/cuda/bin/nvcc", nvcc_version="13.0", cuda_runtime_h=runtime,
                                extension_headers=list(headers), missing_headers=list(missing))
    return f


def test_a_header_torch_includes_missing_is_affected_and_names_its_package():
    f = facts(["cusparse.h", "curand.h"])
    o = only(ID, f)
    assert o.status is Status.AFFECTED and "cusparse.h" in o.reason and "libcusparse-dev" in o.reason
    first = registry().find(ID).advise(f)[0]
    assert first.command == "apt-get install -y libcusparse-dev-13-0 libcurand-dev-13-0"


def test_only_the_jit_builds_headers_missing_is_likely():
    o = only(ID, facts(["nvrtc.h"]))
    assert o.status is Status.LIKELY and "nvrtc.h" in o.reason and "cuda-nvrtc-dev" in o.reason


def test_a_complete_toolkit_is_ok_and_no_toolkit_is_another_issue():
    assert only(ID, facts([])).status is Status.OK
    assert only(ID, facts([], runtime=None)).status is Status.NOT_APPLICABLE
    assert only(ID, facts([], headers=[])).status is Status.INCONCLUSIVE
    assert only(ID, make_facts()).status is Status.NOT_APPLICABLE  # a CPU-only torch


@pytest.fixture(scope="module")
def bare_toolkit():
    """This machine's toolkit, when it has nvcc and the runtime's headers but no math library headers."""
    nvcc = TOOLKIT / "bin" / "nvcc"
    if not (nvcc.exists() and (TOOLKIT / "include" / "cuda_runtime.h").exists()):
        pytest.skip("no CUDA toolkit at /usr/local/cuda")
    if (TOOLKIT / "include" / "cusparse.h").exists():
        pytest.skip("this toolkit has the math libraries' headers: nothing to reproduce")
    return nvcc


def test_the_real_compile_error_is_this_issue(bare_toolkit, tmp_path):
    src = tmp_path / "ext.cu"
    src.write_text("#include <ATen/cuda/CUDAContext.h>\n__global__ void k(float *x) { x[0] = 1; }\n")
    include = SYSTEM_TORCH / "include"
    args = ["-std=c++17", f"-I{include}", f"-I{include}/torch/csrc/api/include", "-c", str(src), "-o",
            str(tmp_path / "ext.o")]
    proc = subprocess.run([str(bare_toolkit), *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "cusparse.h: No such file or directory" in proc.stderr, proc.stderr[-800:]
    data = proc.stderr.encode()
    result = triage_text(LogInput("nvcc", data, len(data)), list(registry()))
    assert {m.issue.id: m.confidence for m in result.matched} == {ID: EXACT}


@pytest.mark.envs
def test_check_through_the_cli_with_a_cuda_torch(bare_toolkit, tmp_path):
    python = venv_python("torch-2.9-nodeps")  # torch 2.9.0 (CUDA 12.8) installed with --no-deps
    proc = run_cli(["check", "--static", "--only", ID, "--python", python, "--format", "json"],
                   env={"CUDA_HOME": str(TOOLKIT), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    (row,) = [r for r in json.loads(proc.stdout)["results"] if r["id"] == ID]
    assert row["status"] == "affected" and "cusparse.h" in row["reason"], row
    assert os.path.isfile(TOOLKIT / "include" / "cuda_runtime.h")
