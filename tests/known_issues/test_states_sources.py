"""Broken states of this machine for the issues whose facts come from release sources, made for real
with torch 2.13.0: the CompilerBisector's state left in an Inductor cache (bisect-state-leftover).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import run_json
from test_rules_environment import make_facts, only

from inductor_doctor.core.facts import BisectState
from inductor_doctor.core.model import Status

BISECT = "bisect-state-leftover"
#: A plain compile, as any program makes it: how many graphs Dynamo captured and which backend
#: compiled them (Inductor writes code to its cache; eager writes nothing).
COMPILE = (
    "import os, torch\n"
    "from torch._dynamo.utils import counters\n"
    "f = torch.compile(lambda x: torch.sin(x) + 1)\n"
    "f(torch.randn(8))\n"
    "cache = os.environ['TORCHINDUCTOR_CACHE_DIR']\n"
    "code = [n for _, _, fs in os.walk(cache) for n in fs if n.endswith('.py')]\n"
    "print(counters['stats']['unique_graphs'], len(code))\n"
)


def _bisector(cache, *args):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "torch._inductor.compiler_bisector", *args], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    cache = tmp_path_factory.mktemp("bisect") / "inductor"
    out = _bisector(cache, "start")
    assert "Starting bisection process with system: eager" in out.stdout, out.stdout + out.stderr
    yield cache
    _bisector(cache, "end")


@pytest.mark.heavy
@pytest.mark.slow  # the bisector and a compile that compiles nothing: ~13 s
def test_a_started_bisection_silently_turns_a_plain_compile_eager_and_the_check_says_so(started):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(started))
    graphs, code = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True,
                                  timeout=300, check=True).stdout.split()
    assert (graphs, code) == ("1", "0"), "Dynamo captured the graph, and Inductor compiled nothing"
    row = run_json(["check", "--static", "--only", BISECT], env={"TORCHINDUCTOR_CACHE_DIR": str(started)})
    finding = row["results"][0]
    assert (finding["status"], finding["basis"]) == ("affected", "static"), finding
    assert "bisect_status.txt" in finding["reason"] and "'eager' backend" in finding["reason"]
    assert f"rm -rf '{started / 'bisect'}'" in [w["command"] for w in finding["workarounds"]]


@pytest.mark.heavy  # a real Inductor compile of a C++ kernel: ~50 s on a 2-core machine
def test_after_end_the_same_compile_uses_inductor_and_the_check_is_ok(tmp_path):
    cache = tmp_path / "inductor"
    _bisector(cache, "start")
    _bisector(cache, "end")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    graphs, code = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True,
                                  timeout=300, check=True).stdout.split()
    assert graphs == "1" and int(code) > 0
    finding = run_json(["check", "--static", "--only", BISECT], env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    assert finding["results"][0]["status"] == "ok", finding["results"][0]


def test_rule_on_recorded_facts():
    state = BisectState(directory="/tmp/torchinductor_u/bisect", exists=True,
                        status_file="/tmp/torchinductor_u/bisect/bisect_status.txt", backend="aot_eager",
                        subsystem="decomposition")
    out = only(BISECT, make_facts(bisect=state))
    assert out.status is Status.AFFECTED
    assert "'aot_eager' backend, with its decomposition subsystem disabled" in out.reason
    env = only(BISECT, make_facts(env={"TORCH_BISECT_BACKEND": "eager"},
                                  bisect=BisectState(directory="/x/bisect")))
    assert env.status is Status.AFFECTED and "TORCH_BISECT_BACKEND=eager" in env.reason
    assert only(BISECT, make_facts(bisect=BisectState(directory="/x/bisect"))).status is Status.OK
    leftover = BisectState(directory="/x/bisect", exists=True, backend="eager")
    old = only(BISECT, make_facts(torch_version="2.5.1", bisect=leftover))
    assert old.status is Status.NOT_APPLICABLE  # torch.compile reads the state from 2.6 on


# --- nvcc-headers-skew: this machine's nvcc (CUDA 13.0) with CUDA 12.4's headers --------------------------

HEADERS = "nvcc-headers-skew"
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] += 1; }\nvoid launch(float* x) { k<<<1, 1>>>(x); }\n"


def cuda12_include() -> str:
    from conftest import ENVS

    inc = ENVS / "cuda12-headers" / "nvidia" / "cuda_nvcc" / "include"
    if not (ENVS / "cuda12-headers" / ".ready").exists():
        pytest.skip("run tests/envs/build_extensions.sh cuda12-headers")
    return str(inc)


@pytest.mark.envs
def test_nvcc_with_another_releases_crt_headers_fails_for_real_and_the_check_says_so(tmp_path):
    from conftest import which_or_skip

    nvcc = which_or_skip("nvcc")
    inc = cuda12_include()
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    env = dict(os.environ, NVCC_PREPEND_FLAGS=f"-I {inc}")
    out = subprocess.run([nvcc, "-c", str(src), "-o", str(tmp_path / "k.o")], env=env, capture_output=True,
                         text=True, timeout=300)
    if "__cudaLaunch" not in out.stderr:
        pytest.skip(f"this nvcc compiles with CUDA 12.4's crt headers (rc={out.returncode}): not a 13.x nvcc")
    on_cpath = subprocess.run([nvcc, "-c", str(src), "-o", str(tmp_path / "k.o")], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, CPATH=inc))
    assert on_cpath.returncode == 0, on_cpath.stderr
    assert 'macro "__cudaLaunch" passed 2 arguments, but takes just 1' in out.stderr
    finding = run_json(["check", "--static", "--only", HEADERS], env={"NVCC_PREPEND_FLAGS": f"-I {inc}"})
    finding = finding["results"][0]
    assert (finding["status"], finding["basis"]) == ("affected", "static"), finding
    assert inc in finding["reason"] and "__cudaLaunch(fun)" in finding["reason"]
    # The same directory on CPATH comes after nvcc's own -I: it compiles, and the check agrees.
    clean = run_json(["check", "--static", "--only", HEADERS], env={"CPATH": inc})["results"][0]
    assert clean["status"] == "ok", clean


def test_header_rule_on_recorded_facts():
    from inductor_doctor.core.facts import CudaHeaderDir, CudaHeadersInfo

    own = CudaHeaderDir(path="/usr/local/cuda-13.0/include", source="nvcc's own", runtime="13.0",
                        launch_args=2)
    crt12 = CudaHeaderDir(path="/venv/nvidia/cuda_nvcc/include", source="NVCC_PREPEND_FLAGS", launch_args=1)
    rt12 = CudaHeaderDir(path="/venv/nvidia/cuda_runtime/include", source="CUDA_HOME", runtime="12.4")
    info = CudaHeadersInfo(nvcc="/usr/local/cuda-13.0/bin/nvcc", nvcc_version="13.0", dirs=[own, crt12])
    assert only(HEADERS, make_facts(cuda_headers=info)).status is Status.AFFECTED
    info = CudaHeadersInfo(nvcc="/usr/local/cuda-13.0/bin/nvcc", nvcc_version="13.0", dirs=[own, rt12])
    likely = only(HEADERS, make_facts(cuda_headers=info))
    assert likely.status is Status.LIKELY and "CUDA 12.4's runtime headers" in likely.reason
    info = CudaHeadersInfo(nvcc="/usr/local/cuda-13.0/bin/nvcc", nvcc_version="13.0", dirs=[own])
    assert only(HEADERS, make_facts(cuda_headers=info)).status is Status.OK
    assert only(HEADERS, make_facts()).status is Status.NOT_APPLICABLE


def test_the_reader_on_this_machines_cuda_headers():
    from inductor_doctor.probe import cuda_headers

    own = "/usr/local/cuda-13.0/include"
    if not os.path.isfile(os.path.join(own, "crt", "host_runtime.h")):
        pytest.skip("no CUDA 13.0 toolkit at /usr/local/cuda-13.0")
    found = cuda_headers.read_dir(own, "nvcc's own")
    assert found is not None and (found.runtime, found.launch_args) == ("13.0", 2)


# --- triton-too-old-for-cuda: Triton 3.2.0 pointed at this machine's CUDA 13.0 ptxas ---------------------

OLD = "triton-too-old-for-cuda"
PTXAS13 = "/usr/local/cuda-13.0/bin/ptxas"


@pytest.mark.envs
def test_triton_3_2_pointed_at_cuda_13s_ptxas_fails_for_real_and_the_check_says_so():
    from conftest import venv_python

    py = venv_python("triton-old-cuda13")
    if not os.path.isfile(PTXAS13):
        pytest.skip(f"no {PTXAS13}")
    affected = run_json(["check", "--static", "--only", OLD, "--python", py],
                        env={"TRITON_PTXAS_PATH": PTXAS13})["results"][0]
    assert (affected["status"], affected["basis"]) == ("affected", "static"), affected
    assert "got CUDA version: 13.0" in affected["reason"]
    bundled = run_json(["check", "--static", "--only", OLD, "--python", py])["results"][0]
    assert bundled["status"] == "not-applicable", bundled


def test_ptx_maps_walks_the_release_mapping_and_the_history_agrees():
    from inductor_doctor.core import source_history as history
    from inductor_doctor.probe._pysource import ptx_maps

    # The shape of 3.2.0's ptx_get_version: CUDA 12 up to 12.6, and a raise for the rest.
    before = "\n".join([
        "def ptx_get_version(cuda_version) -> int:",
        "    major, minor = map(int, cuda_version.split('.'))",
        "    if major == 12:",
        "        if minor < 6:",
        "            return 80 + minor",
        "        elif minor == 6:",
        "            return 85",
        "    if major == 11:",
        "        return 70 + minor",
        "    raise RuntimeError('Triton only support CUDA 10.0 or higher')",
        ""])
    assert [ptx_maps(before, c) for c in ("12.4", "12.6", "12.8", "13.0")] == [True, True, False, False]
    assert history.data()["triton_ptx_cuda"]["3.2.0"][-1] == "12.6"
    assert "13.0" in history.data()["triton_ptx_cuda"]["3.5.0"]
    assert "13.0" not in history.data()["triton_ptx_cuda"]["3.4.0"]
