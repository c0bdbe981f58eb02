"""The GPU/CUDA catalog against real broken states of this machine, through the real CLI.

What can be broken here without a GPU: the CUDA libraries a CUDA torch loads (a CUDA 12.1
libnvJitLink on LD_LIBRARY_PATH in front of torch 2.5.1's and 2.6.0's CUDA 12.4 wheels) and the CUDA
toolkit AOTInductor and extensions need (no nvcc, no CUDA_HOME, /usr/local hidden in a private mount
namespace). Each state runs `inductor-doctor check` on every issue and asserts the contract: the
issue of that state is flagged, with its workaround, and nothing else that the same interpreter's
normal state does not already flag. GPU states are in test_gpu_catalog_gpu.py and gpu_states.sh.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest
from conftest import ENVS, run_cli, venv_python
from test_rules_gpu import GPU_CATALOG
from test_states_environment import _baseline, _check, _commands, _finding, _flagged, _new_flags

pytestmark = pytest.mark.slow

CUDA121_LIBS = ENVS / "catalog-cuda121-libs" / "lib"


def _cuda121() -> str:
    if not (CUDA121_LIBS / "libnvJitLink.so.12").exists():
        pytest.skip("CUDA 12.1 libraries missing: run tests/envs/build_gpu_catalog.sh")
    return str(CUDA121_LIBS)


@pytest.mark.heavy
def test_normal_state_flags_none_of_the_gpu_catalog():
    report = _check(sys.executable)
    flagged = {k: v for k, v in _flagged(report).items() if k in GPU_CATALOG}
    assert flagged == {}, [_finding(report, k)["reason"] for k in flagged]
    for id_ in GPU_CATALOG:
        assert _finding(report, id_)["status"] == "not-applicable"  # a CPU torch, no driver


@pytest.mark.envs
def test_an_older_nvjitlink_on_ld_library_path_breaks_torch_2_5():
    python = venv_python("xla-2.5.1")
    report = _check(python, env={"LD_LIBRARY_PATH": _cuda121()})
    # The cause, and its consequence: `import torch` itself fails there (torch-missing says how).
    assert _new_flags(report, python) == {"cuda-libs-shadowed": "affected", "torch-missing": "affected"}
    assert "undefined symbol: __nvJitLink" in _finding(report, "torch-missing")["reason"]
    f = _finding(report, "cuda-libs-shadowed")
    assert "undefined symbol: __nvJitLink" in f["reason"] and "_12_4" in f["reason"]
    assert "libcusparse.so.12" in f["reason"] and "LD_LIBRARY_PATH" in f["reason"]
    assert "unset LD_LIBRARY_PATH" in _commands(f)


@pytest.mark.envs
def test_torch_2_6_is_not_shadowed_in_the_same_state():
    python = venv_python("xla-2.6.0")
    report = _check(python, env={"LD_LIBRARY_PATH": _cuda121()})
    assert _new_flags(report, python) == {}
    assert _finding(report, "cuda-libs-shadowed")["status"] == "ok"
    proc = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, LD_LIBRARY_PATH=_cuda121()), cwd="/")
    assert proc.returncode == 0, proc.stderr[-500:]


@pytest.mark.envs
def test_a_too_old_nvjitlink_wheel_breaks_torch_2_6():
    python = venv_python("catalog-nvjitlink-skew")  # xla-2.6.0 with nvidia-nvjitlink-cu12 12.1.105
    report = _check(python)
    assert _new_flags(report, venv_python("xla-2.6.0")) == {"cuda-libs-shadowed": "affected",
                                                            "torch-missing": "affected"}
    assert "undefined symbol" in _finding(report, "torch-missing")["reason"]
    f = _finding(report, "cuda-libs-shadowed")
    assert "torch's own libnvJitLink.so.12" in f["reason"] and "_12_4" in f["reason"]
    assert "pip install -U --force-reinstall nvidia-nvjitlink-cu12" in _commands(f)


def _hidden_usr_local(tmp_path: Path) -> Tuple[Tuple[str, ...], Dict[str, str]]:
    """A private mount namespace with an empty /usr/local: no /usr/local/cuda, no nvcc wrapper."""
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare or "unshare", "--mount", "sh", "-c", "mount -t tmpfs tmpfs /usr/local"],
                           capture_output=True, text=True)
    if unshare is None or probe.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs here ({probe.stderr.strip()[:200]})")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("python3", "python"):
        (bindir / name).symlink_to(os.path.realpath(sys.executable))
    path = f"{bindir}:/usr/bin:/bin"
    wrap = ("unshare", "--mount", "sh", "-c", 'mount -t tmpfs tmpfs /usr/local && exec "$@"', "sh")
    return wrap, {"PATH": path}


@pytest.mark.envs
def test_no_cuda_toolkit_at_all(tmp_path):
    python = venv_python("xla-2.6.0")
    if os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH"):
        pytest.skip("CUDA_HOME/CUDA_PATH set in this environment")
    wrap, env = _hidden_usr_local(tmp_path)
    report = _check(python, env=env, wrap=wrap)
    assert _new_flags(report, python) == {}  # the toolkit was already incomplete in the normal state
    assert set(_flagged(report)) == {k for k, _ in _baseline(python)}
    f = _finding(report, "cuda-toolkit-missing")
    assert f["status"] == "affected" and f["severity"] == "warning"
    assert "no CUDA toolkit" in f["reason"] and "CUDA_HOME environment variable is not set" in f["reason"]
    said = subprocess.run([*wrap, python, "-c", "from torch.utils.cpp_extension import CUDA_HOME; "
                           "print(CUDA_HOME)"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env), cwd="/")
    assert said.stdout.strip().splitlines()[-1] == "None"  # torch's own search agrees


@pytest.mark.envs
@pytest.mark.parametrize("cuda_home,words", [
    ("/usr/local/cuda", "mismatches the version that was used to compile PyTorch (12.4)"),
    ("/nonexistent", "does not exist"),
])
def test_toolkit_of_another_release_or_none(cuda_home, words):
    python = venv_python("xla-2.6.0")
    if cuda_home == "/usr/local/cuda" and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("no CUDA toolkit in /usr/local/cuda here")
    proc = run_cli(["check", "--no-cache", "--format", "json", "--only", "cuda-toolkit-missing",
                    "--python", python], env={"CUDA_HOME": cuda_home}, timeout=300)
    f = _finding(json.loads(proc.stdout), "cuda-toolkit-missing")
    assert f["status"] == "affected" and words in f["reason"], f["reason"]
    assert any("CUDA_HOME" in c for c in _commands(f))
