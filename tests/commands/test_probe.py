"""The probe end to end: the real CLI against real interpreters (this one, a bare venv, a broken
torch, something that is not Python at all), and the promise that the doctor never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli, run_json, venv_python

from inductor_doctor.schemas import validate

TORCH_MODULES = ("torch", "triton", "torch_xla")


@pytest.fixture(scope="module")
def static_probe() -> dict:
    return run_json(["probe"])


def test_probe_json_is_a_probe_report(static_probe):
    assert static_probe["schema"] == "inductor-doctor/probe/v1"
    validate("probe", static_probe)
    env = static_probe["environment"]
    assert env["python"]["version"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    assert env["python"]["error"] is None
    assert env["python"]["glibc"]
    assert env["python"]["libstdcxx_glibcxx_max"], "the GLIBCXX max of the libstdc++ the target loads"


def test_probe_finds_torch_2_13_statically(static_probe):
    torch = static_probe["environment"]["torch"]
    assert torch["version"].startswith("2.13.0")
    assert torch["cxx11_abi"] is True
    assert torch["built_with"].startswith("GCC ")
    assert torch["libtorch_cpu"].endswith("libtorch_cpu.so")
    assert torch["import_ok"] is None, "a static probe never imports torch, so it cannot know"


def test_probe_finds_gcc_12_with_python_h_and_openmp(static_probe):
    cxx = static_probe["environment"]["cxx"]
    assert cxx["command"] == os.environ.get("CXX", "g++")
    assert cxx["kind"] == "gcc" and cxx["version"].startswith("12.")
    assert cxx["works"] is True and cxx["python_h"] is True and cxx["openmp"] is True
    cc = static_probe["environment"]["cc"]
    assert cc["works"] is True and cc["python_h"] is True


def test_probe_without_gpu_has_no_gpus(static_probe):
    cuda = static_probe["environment"]["cuda"]
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    assert cuda["gpus"] == []
    assert cuda["driver_version"] is None
    assert any("no NVIDIA driver" in n for n in cuda["notes"])


def test_probe_reports_the_abi_verdict(static_probe):
    abi = static_probe["environment"]["abi"]
    assert abi["status"] == "ok"
    assert "_ZNK2at10TensorBase14const_data_ptr" in abi["reason"]


def test_probe_reports_the_code_cache_directories(static_probe):
    dirs = static_probe["environment"]["caches"]["dirs"]
    assert [d["name"] for d in dirs] == ["inductor", "triton"]
    assert all(d["path"] for d in dirs)


def test_the_doctor_process_never_imports_torch():
    """`-X importtime` lists every module the doctor's own process imports (not its children's)."""
    env = dict(os.environ)  # the run's private caches (conftest)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "inductor_doctor", "probe", "--live", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=300, cwd=str(REPO),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["environment"]["torch"]["import_ok"] is True
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    heavy = sorted(m for m in imported if m.split(".")[0] in TORCH_MODULES)
    assert not heavy, f"the doctor imported {heavy}"


def test_gather_leaves_sys_modules_clean():
    code = (
        "import sys\n"
        "from inductor_doctor.probe import gather\n"
        "f = gather(live=True)\n"
        "assert f.torch.import_ok is True, f.torch\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {TORCH_MODULES!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("live", [[], ["--live"]])
@pytest.mark.parametrize("target", ["/bin/ls", "/bin/false"])
def test_probe_of_something_that_is_not_python(target, live):
    """A target that is not a Python interpreter is the user's mistake: one line, exit 2 (as the
    contract says), before anything is probed."""
    proc = run_cli(["probe", *live, "--python", target, "--format", "json"])
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"inductor-doctor: --python {target}: not a usable Python interpreter"), line


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    return str(root / "bin" / "python")


def test_probe_of_a_venv_without_torch(bare_venv):
    env = run_json(["probe", "--live", "--python", bare_venv])["environment"]
    assert env["python"]["error"] is None
    assert env["python"]["prefix"] == str(Path(bare_venv).parent.parent)
    assert env["torch"] is None and env["triton"] is None and env["xla"] is None
    assert env["abi"]["status"] == "not-applicable"
    assert env["live"]["import_ok"] is False and "torch" in env["live"]["import_error"]


def test_probe_live_adds_import_and_abi_flag():
    env = run_json(["probe", "--live"])["environment"]
    assert env["torch"]["import_ok"] is True
    assert env["torch"]["cxx11_abi"] is True
    assert env["live"]["stage"] == "done"
    assert env["live"]["cuda_available"] is False
    loaded = env["live"]["loaded"]
    assert any(os.path.basename(p).startswith("libtorch_cpu") for p in loaded)
    assert any(os.path.basename(p).startswith("libstdc++") for p in loaded)


@pytest.mark.envs
def test_probe_of_a_torch_whose_import_fails():
    py = venv_python("torch-2.9-nodeps")
    env = run_json(["probe", "--live", "--python", py])["environment"]
    torch = env["torch"]
    assert torch["import_ok"] is False
    assert "typing_extensions" in torch["import_error"]
    # Everything static is still there.
    assert torch["version"] == "2.9.0+cu128" and torch["cuda"] == "12.8"
    assert torch["cxx11_abi"] is True and torch["built_with"].startswith("GCC 13")
    assert torch["triton_pin"] == "==3.5.0"
    assert env["abi"]["status"] == "ok"


@pytest.mark.envs
def test_probe_of_torch_xla_env():
    py = venv_python("xla-2.5.1")
    env = run_json(["probe", "--python", py])["environment"]
    assert env["xla"]["version"] == "2.5.1"
    assert env["torch"]["cxx11_abi"] is False, "the 2.5.1 CUDA 12.4 wheels use the pre-C++11 ABI"
    assert env["triton"]["version"] == "3.1.0" and env["torch"]["triton_pin"] == "==3.1.0"
    assert env["triton"]["bundled_ptxas"] and env["triton"]["bundled_ptxas_version"] == "12.4"


def test_probe_text_is_readable():
    proc = run_cli(["probe"], env={"NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "\x1b[" not in proc.stdout
    assert "2.13.0" in proc.stdout


def test_the_live_probe_leaves_the_users_compile_caches_alone(tmp_path):
    """The doctor changes nothing. On a GPU host the live probe's import of torch._inductor made the
    user's /tmp/torchinductor_<user>; besides being a change, it moved the cache facts that every
    canary is keyed by, so the second check after a first re-ran every canary. (On a CPU host that
    import never happened: this runs in CI as a guard, and on a GPU host as the proof.)"""
    tmp, home = tmp_path / "tmp", tmp_path / "home"
    tmp.mkdir()
    home.mkdir()
    data = run_json(["probe", "--live"], env={"TMPDIR": str(tmp), "HOME": str(home),
                                    "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "doctor"),
                                    # the defaults, not the test run's private caches (conftest)
                                    "TORCHINDUCTOR_CACHE_DIR": None, "TRITON_CACHE_DIR": None,
                                    "TRITON_HOME": None})
    assert data["environment"]["torch"]["import_ok"] is True, data["environment"]["torch"]
    assert not list(tmp.glob("torchinductor_*")), sorted(p.name for p in tmp.iterdir())
    assert not (home / ".triton").exists()
