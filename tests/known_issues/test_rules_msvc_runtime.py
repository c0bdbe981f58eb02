"""windows-msvc-runtime-old: the Visual C++ runtime a Windows process loads against the MSVC that built
torch's and Triton's DLLs.

On recorded facts (a Windows host described as the probe describes one), and on real Windows DLLs read
here (`-m envs`, tests/envs/build_platforms.sh): Microsoft's msvcp140.dll of 14.29 and 14.42 from the
msvc-runtime wheels, and torch 2.8.0's and 2.9.0's c10.dll from their Windows wheels, which the PE
reader finds linked by MSVC 14.38 and 14.42. No Windows here: the loader's refusal itself is the
threads'.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ENVS
from test_rules_environment import only
from test_rules_platforms import windows

from inductor_doctor.core.facts import RuntimeDll
from inductor_doctor.core.model import Status
from inductor_doctor.probe import pe
from inductor_doctor.probe.windows import gather_windows

ID = "windows-msvc-runtime-old"
SYS32 = r"C:\Windows\System32"


def host(runtime: str, built: str, **more):
    return windows(vc_runtime=[RuntimeDll("msvcp140.dll", SYS32 + r"\msvcp140.dll", runtime)],
                   msvc_built={"torch/lib/c10.dll": built}, **more)


def test_a_runtime_older_than_14_40_under_a_14_42_torch_is_affected():
    """torch 2.9's c10.dll (MSVC 14.42) and a 14.29 redistributable: nunif#701, graph-rag-agent#54."""
    o = only(ID, host("14.29.30133.0", "14.42"))
    assert o.status is Status.AFFECTED and "14.29.30133.0" in o.reason and "14.42" in o.reason


def test_an_older_runtime_below_the_known_break_is_likely():
    """torch 2.8's c10.dll (14.38) on 14.29: unsupported by Microsoft's rule, not known to break."""
    assert only(ID, host("14.29.30133.0", "14.38")).status is Status.LIKELY


def test_a_conda_environments_own_old_copy_shadows_the_new_one():
    f = windows(vc_runtime=[RuntimeDll("msvcp140.dll", r"C:\conda\envs\x\msvcp140.dll", "14.29.30133.0",
                                       others=[SYS32 + r"\msvcp140.dll (14.44.35211.0)"])],
                msvc_built={"torch/lib/c10.dll": "14.42"})
    o = only(ID, f)
    assert o.status is Status.AFFECTED and "shadowed" in o.reason and "14.44.35211.0" in o.reason


def test_no_runtime_at_all_is_affected_and_a_new_one_ok():
    missing = windows(vc_runtime=[RuntimeDll("msvcp140.dll")],
                      msvc_built={"torch/lib/c10.dll": "14.42"})
    assert only(ID, missing).status is Status.AFFECTED
    assert only(ID, host("14.44.35211.0", "14.42")).status is Status.OK


def test_not_windows():
    from test_rules_environment import make_facts
    assert only(ID, make_facts()).status is Status.NOT_APPLICABLE


# --- real Windows DLLs, read here ---------------------------------------------------------------------

DLLS = ENVS / "platforms-windows-dlls"


@pytest.fixture(scope="module")
def dlls() -> Path:
    if not (DLLS / ".ready").exists():
        pytest.skip("run tests/envs/build_platforms.sh (Windows DLLs from the msvc-runtime and torch wheels)")
    return DLLS


@pytest.mark.envs
def test_the_pe_reader_on_real_dlls(dlls):
    assert pe.linker_version(str(dlls / "torch-2.8.0" / "lib" / "c10.dll")) == (14, 38)
    assert pe.linker_version(str(dlls / "torch-2.9.0" / "lib" / "c10.dll")) == (14, 42)
    assert pe.file_version(str(dlls / "runtime-14.29.30133" / "msvcp140.dll")) == "14.29.30133.0"
    assert pe.file_version(str(dlls / "runtime-14.42.34433" / "msvcp140.dll")) == "14.42.34433.0"
    assert pe.linker_version(__file__) is None and pe.file_version(__file__) is None


@pytest.mark.envs
@pytest.mark.parametrize("torch, in_python_dir, in_system32, status", [
    ("2.9.0", None, "14.29.30133", Status.AFFECTED),
    ("2.9.0", None, "14.42.34433", Status.OK),
    ("2.8.0", None, "14.29.30133", Status.LIKELY),
    ("2.9.0", "14.29.30133", "14.42.34433", Status.AFFECTED),  # a conda env's own old copy comes first
])
def test_the_probe_and_the_rule_on_a_laid_out_host(dlls, tmp_path, torch, in_python_dir, in_system32, status):
    """A host laid out with real DLLs where Windows looks (python.exe's folder, torch\\lib, System32)."""
    python_dir, system32, torch_dir = tmp_path / "env", tmp_path / "Windows" / "System32", tmp_path / "torch"
    for d in (python_dir, system32, torch_dir / "lib"):
        d.mkdir(parents=True)
    shutil.copy(dlls / f"torch-{torch}" / "lib" / "c10.dll", torch_dir / "lib" / "c10.dll")
    shutil.copy(dlls / f"runtime-{in_system32}" / "msvcp140.dll", system32 / "msvcp140.dll")
    if in_python_dir:
        shutil.copy(dlls / f"runtime-{in_python_dir}" / "msvcp140.dll", python_dir / "msvcp140.dll")
    info = gather_windows({"SystemRoot": str(tmp_path / "Windows")}, str(torch_dir), None, system_facts=False,
                          python_executable=str(python_dir / "python.exe"))
    f = windows(vc_runtime=info.vc_runtime, msvc_built=info.msvc_built)
    o = only(ID, f)
    assert o.status is status, o.reason
    assert info.msvc_built == {"torch/lib/c10.dll": "14.38" if torch == "2.8.0" else "14.42"}
