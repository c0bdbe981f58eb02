"""The catalog against real broken states of this machine, through the real CLI.

Each test breaks one thing for real (a PATH without compilers, CXX=clang++-16 without libomp, a
Python without headers, torch and Triton from different releases, Python 3.13 under torch 2.5.1,
a noexec or read-only cache mount) and runs `inductor-doctor check` on every issue. The assertion is
the contract's: the issue of that state is flagged (affected/likely), with its workaround, and
nothing else is flagged that the same interpreter's normal state does not already flag.

States that need a GPU, a driver, an old compiler or an old libstdc++ are in test_catalog.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest
from conftest import run_cli, venv_python, which_or_skip
from test_rules_environment import CATALOG

pytestmark = pytest.mark.slow

FLAGGED = ("affected", "likely")
XLA_ENVS = ("xla-2.5.1", "xla-2.6.0")


def _check(python: str, env: Optional[Dict[str, str]] = None, wrap: Tuple[str, ...] = (),
           extra: Tuple[str, ...] = (), fresh: bool = True) -> dict:
    """A full check. `fresh=False` lets canary outcomes come from the doctor's result cache (this
    worker's own): only for this interpreter's normal state, whose baseline run (the first to need
    it) has just kept them, so the normal state's test does not compile every canary twice."""
    args = ["check", *(["--no-cache"] if fresh else []), "--format", "json", "--quiet", *extra]
    if python != sys.executable:
        args += ["--python", python]
    if any(name in python for name in XLA_ENVS):
        args += ["--skip", "xla-donor-hash"]  # torch_xla's own canary: slow, and no part of these states
    if not wrap:
        proc = run_cli(args, env=env, timeout=900)
    else:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([*wrap, sys.executable, "-m", "inductor_doctor", *args], capture_output=True,
                              text=True, env=full_env, timeout=900)
    assert proc.stdout.strip(), f"rc={proc.returncode} stderr={proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    assert {r["id"] for r in report["results"]} >= set(CATALOG), "every catalog issue was checked"
    return report


@cache
def _baseline(python: str) -> Tuple[Tuple[str, str], ...]:
    """What this interpreter flags in its normal state (computed once per session)."""
    return tuple(sorted(_flagged(_check(python, fresh=python != sys.executable)).items()))


def _flagged(report: dict) -> Dict[str, str]:
    return {r["id"]: r["status"] for r in report["results"] if r["status"] in FLAGGED}


def _new_flags(report: dict, python: str) -> Dict[str, str]:
    base = dict(_baseline(python))
    return {k: v for k, v in _flagged(report).items() if k not in base}


def _finding(report: dict, id_: str) -> dict:
    found = [r for r in report["results"] if r["id"] == id_]
    assert len(found) == 1, found
    return found[0]


def _commands(finding: dict):
    return [w["command"] for w in finding["workarounds"] if w["command"]]


def _compilerless_path(tmp_path: Path) -> str:
    """A PATH holding only the Python interpreter: no cc, gcc, g++, clang or c++."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("python3", "python"):
        (bindir / name).symlink_to(os.path.realpath(sys.executable))
    return str(bindir)


# --- this machine as it is ---------------------------------------------------------------------


@pytest.mark.heavy
def test_normal_state_flags_nothing_in_the_catalog():
    report = _check(sys.executable, fresh=False)
    flagged = {k: v for k, v in _flagged(report).items() if k in CATALOG}
    assert flagged == {}, [(_finding(report, k)["reason"]) for k in flagged]
    assert report["summary"]["affected"] == 0


# --- broken for real, with the system torch 2.13 ---------------------------------------------


@pytest.mark.heavy
def test_no_compiler_on_path(tmp_path):
    report = _check(sys.executable, env={"PATH": _compilerless_path(tmp_path)})
    assert _new_flags(report, sys.executable) == {"cxx-compiler-missing": "affected"}
    f = _finding(report, "cxx-compiler-missing")
    assert f["basis"] == "canary" and "No working C++ compiler found" in f["reason"]
    # g++ is installed, only PATH does not reach it: naming it helps, installing it again does not.
    first = "export CXX=/usr/bin/g++" if os.access("/usr/bin/g++", os.X_OK) else "apt-get install -y g++"
    assert _commands(f)[0] == first


@pytest.mark.heavy
def test_clang_without_libomp():
    which_or_skip("clang++-16")
    if Path("/usr/lib/llvm-16/lib/clang/16/include/omp.h").exists() or Path("/usr/include/omp.h").exists():
        pytest.skip("libomp headers are installed here: clang-16 has OpenMP")
    report = _check(sys.executable, env={"CXX": "clang++-16"})
    assert _new_flags(report, sys.executable) == {"openmp-headers-missing": "affected"}
    f = _finding(report, "openmp-headers-missing")
    assert "omp.h" in f["reason"] and "export CXX=g++" in _commands(f)
    assert _finding(report, "clang-on-linux")["status"] == "ok"  # torch 2.13 recognises clang


def _mount_wrapper(tmp_path: Path, options: str) -> Tuple[Tuple[str, ...], str]:
    """`unshare --mount`: a private mount namespace with a tmpfs mounted with `options`."""
    unshare = shutil.which("unshare")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    probe = subprocess.run([unshare or "unshare", "--mount", "sh", "-c", f"mount -t tmpfs -o {options} tmpfs "
                            f"{mnt} && grep -q ' {mnt} ' /proc/self/mounts"], capture_output=True, text=True)
    if unshare is None or probe.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs here ({probe.stderr.strip()[:200]})")
    script = f'mount -t tmpfs -o {options} tmpfs "{mnt}" && exec "$@"'
    return ("unshare", "--mount", "sh", "-c", script, "sh"), str(mnt)


@pytest.mark.heavy
def test_cache_on_a_noexec_mount(tmp_path):
    wrap, mnt = _mount_wrapper(tmp_path, "noexec")
    report = _check(sys.executable, env={"TORCHINDUCTOR_CACHE_DIR": f"{mnt}/inductor"}, wrap=wrap)
    assert _new_flags(report, sys.executable) == {"cache-dir-noexec": "affected"}
    f = _finding(report, "cache-dir-noexec")
    assert "noexec" in f["reason"] and any("TORCHINDUCTOR_CACHE_DIR" in c for c in _commands(f))


def test_noexec_mount_really_breaks_loading(tmp_path):
    """The failure the rule predicts, reproduced: a shared object on that mount does not load."""
    wrap, mnt = _mount_wrapper(tmp_path, "noexec")
    ext = next(Path(os.__file__).parent.glob("lib-dynload/_json*.so"), None)
    if ext is None:
        pytest.skip("no stdlib extension module to copy")
    code = f"import ctypes, shutil; ctypes.CDLL(shutil.copy({str(ext)!r}, {mnt!r}))"
    proc = subprocess.run([*wrap, sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0 and "failed to map segment from shared object" in proc.stderr


@pytest.mark.heavy
def test_cache_on_a_read_only_mount(tmp_path):
    wrap, mnt = _mount_wrapper(tmp_path, "ro")
    report = _check(sys.executable, env={"TORCHINDUCTOR_CACHE_DIR": f"{mnt}/inductor"}, wrap=wrap)
    assert _new_flags(report, sys.executable) == {"cache-dir-unwritable": "affected"}
    f = _finding(report, "cache-dir-unwritable")
    assert "read-only" in f["reason"] and any("TORCHINDUCTOR_CACHE_DIR" in c for c in _commands(f))


# --- broken for real, in the cached venvs (tests/envs/build*.sh) -------------------------------


@pytest.mark.envs
def test_python_without_headers():
    python = venv_python("catalog-noheaders")  # this Python and torch, minus include/
    report = _check(python)
    assert _new_flags(report, sys.executable) == {"python-headers-missing": "affected"}
    f = _finding(report, "python-headers-missing")
    assert "catalog-noheaders/include" in f["reason"]
    # A pyenv-built Python: apt-get's python3-dev would install /usr/bin/python3's headers, not its own.
    assert "is not the system's Python" in f["workarounds"][0]["text"]
    assert not any(c.startswith(("apt-get", "dnf")) for c in _commands(f))


@pytest.mark.envs
def test_no_compiler_with_a_cuda_torch_and_triton(tmp_path):
    """torch 2.5.1 (CUDA) with Triton 3.1.0: Triton's launcher has no C compiler either (no GPU: likely)."""
    python = venv_python("xla-2.5.1")
    report = _check(python, env={"PATH": _compilerless_path(tmp_path)})
    # PATH decides where torch finds the CUDA toolkit too (an nvcc on PATH, else /usr/local/cuda), so
    # the toolkit's rows may change with it on a machine that has one: not what this state is about.
    flags = {k: v for k, v in _new_flags(report, python).items() if not k.startswith("cuda-toolkit")}
    assert flags == {"cxx-compiler-missing": "affected", "triton-no-c-compiler": "likely"}
    assert "apt-get install -y gcc" in _commands(_finding(report, "triton-no-c-compiler"))


@pytest.mark.envs
def test_clang_with_torch_2_6_is_taken_for_gcc():
    which_or_skip("clang++-16")
    python = venv_python("xla-2.6.0")
    report = _check(python, env={"CXX": "clang++-16"})
    assert _new_flags(report, python) == {"openmp-headers-missing": "affected", "clang-on-linux": "affected"}
    f = _finding(report, "clang-on-linux")
    assert "fno-tree-loop-vectorize" in f["reason"] and "export CXX=g++" in _commands(f)


@pytest.mark.envs
def test_torch_and_triton_from_different_releases():
    python = venv_python("catalog-triton-skew")  # torch 2.6.0 (pins 3.2.0) + triton 3.3.1
    report = _check(python)
    assert _new_flags(report, venv_python("xla-2.6.0")) == {"triton-version-skew": "affected"}
    f = _finding(report, "triton-version-skew")
    assert f["basis"] == "canary" and "AttrsDescriptor" in f["reason"]
    assert any("pip install" in c and "triton" in c for c in _commands(f))


@pytest.mark.envs
def test_python_newer_than_dynamo_supports():
    python = venv_python("catalog-py313-torch25")  # CPython 3.13 + torch 2.5.1
    report = _check(python)
    # torch 2.5.1 requires Triton only below Python 3.13, so none is installed: TritonMissing on a GPU.
    assert _new_flags(report, venv_python("xla-2.5.1")) == {
        "python-unsupported-by-dynamo": "affected", "triton-missing": "likely"}
    f = _finding(report, "python-unsupported-by-dynamo")
    assert "Dynamo is not supported on Python 3.13+" in f["reason"]
    assert 'pip install -U "torch>=2.6"' in _commands(f)


@pytest.mark.envs
def test_cuda_torch_installed_without_its_triton():
    python = venv_python("torch-2.9-nodeps")  # torch 2.9.0 (CUDA) installed with --no-deps
    report = run_cli(["check", "--no-cache", "--only", "triton-missing", "--format", "json",
                      "--python", python])
    f = _finding(json.loads(report.stdout), "triton-missing")
    assert f["status"] == "likely" and "no triton installed" in f["reason"]
