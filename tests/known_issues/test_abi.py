"""The const_data_ptr ABI check with real compilers against real torch headers and libtorch.

Upstream facts (known-issues §4): torch 2.9 declares `const_data_ptr` with an enable_if default
argument, so clang++-19 references a `Tn`-mangled symbol libtorch does not export, while g++ and
clang++-19 -fclang-abi-compat=17 reference the exported one; torch 2.13 declares a plain template,
which every compiler mangles alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import run_cli, venv_python, which_or_skip

from inductor_doctor.core.model import Status
from inductor_doctor.kb.const_data_ptr_abi import judge
from inductor_doctor.probe import abi, target, torch_build
from inductor_doctor.probe.packages import packages
from inductor_doctor.schemas import validate

ID = "const-data-ptr-abi"
TN = "_ZNK2at10TensorBase14const_data_ptrIlTnNSt9enable_ifIXntsr3stdE10is_const_vIT_EEiE4typeELi0EEEPKS3_v"
OLD = "_ZNK2at10TensorBase14const_data_ptrIlLi0EEEPKT_v"
PLAIN = "_ZNK2at10TensorBase14const_data_ptrIlEEPKT_v"

pytestmark = pytest.mark.slow


def check(python: str, cxx: str, cflags: str = "", cxxflags: str = "") -> tuple:
    """`inductor-doctor check --only const-data-ptr-abi`, as a user runs it: (exit code, result).

    No cache of any kind: every call really compiles the probe.
    """
    env = {"CXX": cxx, "CFLAGS": cflags, "CXXFLAGS": cxxflags, "INDUCTOR_DOCTOR_NO_CACHE": "1"}
    proc = run_cli(["check", "--only", ID, "--python", python, "--format", "json", "--no-cache", "-q"],
                   env=env)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    validate("check", report)
    (result,) = [r for r in report["results"] if r["id"] == ID]
    assert result["device"] == "toolchain" and result["basis"] == "static"
    assert report["environment"]["abi"]["cached"] is False
    return proc.returncode, result, report["environment"]["abi"]


@pytest.fixture(scope="module")
def torch29() -> str:
    return venv_python("torch-2.9-nodeps")


def test_gxx_with_torch_2_13_is_ok():
    gxx = which_or_skip("g++")
    rc, result, facts = check(sys.executable, gxx)
    assert rc == 0
    assert result["status"] == "ok"
    assert facts["referenced"] == [PLAIN] and facts["missing"] == []
    assert "gcc 12" in result["reason"]
    assert "-std=c++20" in result["reason"], "torch 2.13's cpp_extension builds with C++20"


@pytest.mark.envs
def test_gxx_with_torch_2_9_is_ok(torch29):
    rc, result, facts = check(torch29, which_or_skip("g++"))
    assert rc == 0 and result["status"] == "ok"
    assert facts["referenced"] == [OLD]


@pytest.mark.envs
def test_clang19_with_torch_2_9_is_affected(torch29):
    clang = which_or_skip("clang++-19")
    rc, result, facts = check(torch29, clang)
    assert rc == 1, "an affected finding fails the run"
    assert result["status"] == "affected"
    reason = result["reason"]
    assert TN in reason, "the reason names the symbol the compiler references"
    assert OLD in reason, "and the spelling libtorch exports instead"
    assert "clang 19" in reason
    assert "-std=c++17 -D_GLIBCXX_USE_CXX11_ABI=1" in reason, "torch 2.9's cpp_extension flags"
    assert facts["missing"] == [TN] and facts["exported_spelling"] == OLD
    commands = [w["command"] for w in result["workarounds"] if w["command"]]
    assert 'export CFLAGS="$CFLAGS -fclang-abi-compat=17"' in commands
    assert "export CXX=g++" in commands
    assert any("data_ptr<T>()" in w["text"] and w["command"] is None for w in result["workarounds"])


@pytest.mark.envs
def test_clang19_with_abi_compat_17_is_ok(torch29):
    rc, result, facts = check(torch29, which_or_skip("clang++-19"), "-fclang-abi-compat=17")
    assert rc == 0 and result["status"] == "ok"
    assert facts["referenced"] == [OLD]
    assert "-fclang-abi-compat=17" in result["reason"], "the verdict is reported per compiler and flags"


@pytest.mark.envs
def test_clang19_with_the_flag_in_cxxflags_is_still_affected_and_says_where_it_belongs(torch29):
    """CXXFLAGS reaches only the link line of an extension build: the old advice did not work."""
    rc, result, _ = check(torch29, which_or_skip("clang++-19"), cxxflags="-fclang-abi-compat=17")
    assert rc == 1 and result["status"] == "affected"
    assert "put it in CFLAGS" in result["reason"]


def test_clang19_with_torch_2_13_is_ok():
    rc, result, facts = check(sys.executable, which_or_skip("clang++-19"))
    assert rc == 0 and result["status"] == "ok"
    assert facts["referenced"] == [PLAIN]
    assert "clang 19" in result["reason"]


@pytest.mark.envs
def test_clang16_with_torch_2_9_is_ok(torch29):
    rc, result, _ = check(torch29, which_or_skip("clang++-16"))
    assert rc == 0 and result["status"] == "ok" and "clang 16" in result["reason"]


def test_no_compiler_is_inconclusive():
    rc, result, _ = check(sys.executable, "/nonexistent/clang++")
    assert rc == 0 and result["status"] == "inconclusive"
    assert "/nonexistent/clang++" in result["reason"]


def test_a_probe_that_does_not_compile_is_inconclusive_with_the_error():
    rc, result, _ = check(sys.executable, which_or_skip("g++"), "-fno-such-option-for-the-doctor")
    assert result["status"] == "inconclusive"
    assert "-fno-such-option-for-the-doctor" in result["reason"]


def test_no_torch_is_not_applicable(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    rc, result, _ = check(str(venv / "bin" / "python"), which_or_skip("g++"))
    assert rc == 0 and result["status"] == "not-applicable"


@pytest.mark.envs
def test_the_check_needs_no_torch_import(torch29):
    """torch-2.9-nodeps cannot be imported; the ABI verdict comes from headers and ELF alone."""
    t = target.query(torch29)
    info = torch_build.torch_info(t, packages(t))
    assert info is not None and info.version == "2.9.0+cu128"
    result = abi.check(info, dict(os.environ, CXX=which_or_skip("clang++-19"), CFLAGS=""))
    assert judge(result)[0] is Status.AFFECTED and result.missing == [TN]
    assert result.duration_s < 30


@pytest.mark.envs
def test_a_verdict_is_remembered_only_for_the_same_compiler_flags_and_files(torch29, tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("INDUCTOR_DOCTOR_NO_CACHE", raising=False)
    monkeypatch.setattr(abi, "_cache", {})  # only the on-disk answers count here
    t = target.query(torch29)
    info = torch_build.torch_info(t, packages(t))
    clang = which_or_skip("clang++-19")
    first = abi.check(info, dict(os.environ, CXX=clang, CFLAGS=""))
    abi._cache.clear()
    again = abi.check(info, dict(os.environ, CXX=clang, CFLAGS=""))
    assert (first.cached, again.cached) == (False, True)
    assert judge(again) == judge(first) and judge(first)[0] is Status.AFFECTED
    abi._cache.clear()
    other = abi.check(info, dict(os.environ, CXX=clang, CFLAGS="-fclang-abi-compat=17"))
    assert other.cached is False and judge(other)[0] is Status.OK
