"""The platform layouts this Linux machine can hold for real, read by the real probe.

* pip's/TheRock's ROCm without /opt/rocm: a venv with a stand-in ROCm torch (its version.py, and the
  real `torch/utils/cpp_extension.py` of the torch here, whose `_find_rocm_home` knows TheRock), a
  directory laid out like `_rocm_sdk_core` (HIP headers, `lib/llvm/bin` with or without ld.lld), and
  Triton's real AMD backend: the 3.4.0 and 3.5.1 releases' `backends/amd/compiler.py` in the default
  run (tests/data/platforms/), the whole 3.4.0 wheel with `-m envs`. `check --static` through the CLI
  says what Triton's own search would find. There is no /opt/rocm here (the test skips if there is).
* A directory laid out like a Visual Studio install (`VC/Tools/MSVC/<ver>/bin/Hostx64/{x64,x86}` with
  their language folders): the probe's Windows readers on it, the rules on what they read.
* The probe of the platform facts, repeated: milliseconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

import pytest
from conftest import ENVS, run_cli
from test_rules_environment import SYSTEM_TORCH
from test_rules_platforms import windows

from inductor_doctor.core.facts import CacheInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.probe import platforms
from inductor_doctor.probe.windows import gather_windows

DATA = Path(__file__).resolve().parent.parent / "data" / "platforms"
TRITON_WHEEL_ENV = ENVS / "platforms-triton-3.4.0"

pytestmark = pytest.mark.skipif(os.path.exists("/opt/rocm"), reason="this machine has /opt/rocm")


def rocm_venv(root: Path, backend: Optional[Path], lld: bool,
              triton_site: Optional[Path] = None, math_in_core: bool = True) -> Dict[str, str]:
    """A venv laid out as pip leaves one with TheRock's ROCm: its interpreter and the paths in it. The
    math libraries' headers (hipblas/hipblas.h) are in the core, or only in a `_rocm_sdk_devel` beside it."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python3*/site-packages"))
    torch = site / "torch"
    (torch / "utils").mkdir(parents=True)
    (torch / "__init__.py").write_text("raise ImportError('a stand-in for a ROCm torch')\n")
    (torch / "version.py").write_text("__version__ = '2.7.1+rocm6.4'\ncuda = None\nhip = '6.4.43483'\n")
    shutil.copy(SYSTEM_TORCH / "utils" / "cpp_extension.py", torch / "utils" / "cpp_extension.py")
    dist = site / "torch-2.7.1+rocm6.4.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.1+rocm6.4\n")
    sdk = site / "_rocm_sdk_core"
    (sdk / "include" / "hip").mkdir(parents=True)
    (sdk / "include" / "hip" / "hip_runtime.h").write_text("#pragma once\n")
    devel = site / "_rocm_sdk_devel"
    for home in [sdk] if math_in_core else [devel]:
        (home / "include" / "hipblas").mkdir(parents=True)
        (home / "include" / "hipblas" / "hipblas.h").write_text("#pragma once\n")
    if not math_in_core:
        (devel / "include" / "hip").mkdir(parents=True)
        (devel / "include" / "hip" / "hip_runtime.h").write_text("#pragma once\n")
        (devel / "__init__.py").write_text("")
    (sdk / "lib" / "llvm" / "bin").mkdir(parents=True)
    (sdk / "__init__.py").write_text("")
    linker = sdk / "lib" / "llvm" / "bin" / "ld.lld"
    if lld:
        linker.write_text("#!/bin/sh\necho 'AMD LLD 19.0.0'\n")
        linker.chmod(0o755)
    if triton_site is not None:  # a real installed wheel: its package and dist-info, as pip left them
        for entry in triton_site.iterdir():
            if entry.name == "triton" or entry.name.startswith("triton-"):
                (site / entry.name).symlink_to(entry)
    elif backend is not None:
        amd = site / "triton" / "backends" / "amd"
        amd.mkdir(parents=True)
        (site / "triton" / "__init__.py").write_text("")
        shutil.copy(backend, amd / "compiler.py")
        tdist = site / "triton-3.4.0.dist-info"
        tdist.mkdir()
        (tdist / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.4.0\n")
    return {"python": str(venv / "bin" / "python"), "lld": str(linker), "sdk": str(sdk), "devel": str(devel)}


def check_row(python: str, tmp: Path, **env: str) -> dict:
    done = run_cli(["check", "--static", "--only", "rocm-toolchain-layout,platform-not-covered", "--python",
                    python, "--format", "json"],
                   env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp / "cache"), "TRITON_HIP_LLD_PATH": None,
                        "ROCM_PATH": None, "ROCM_HOME": None, **env})
    assert done.stdout.strip(), done.stderr[-2000:]
    data = json.loads(done.stdout)
    rows = {r["id"]: r for r in data["results"]}
    return {"row": rows["rocm-toolchain-layout"], "notice": rows["platform-not-covered"],
            "rocm": data["environment"]["platform"]["rocm"]}


def test_therock_layout_without_ld_lld_is_affected_and_the_linker_there_fixes_it(tmp_path: Path):
    venv = rocm_venv(tmp_path, DATA / "triton-3.4.0-backends-amd-compiler.py.txt", lld=False)
    seen = check_row(venv["python"], tmp_path)
    assert seen["row"]["status"] == "affected", seen["row"]["reason"]
    assert "/opt/rocm/llvm/bin/ld.lld" in seen["row"]["reason"]
    assert seen["rocm"]["lld_search"][:2] == ["$TRITON_HIP_LLD_PATH", "<backend>/llvm/bin/ld.lld"]
    assert seen["rocm"]["rocm_home_how"] == "TheRock's _rocm_sdk_core", seen["rocm"]
    assert seen["rocm"]["hip_runtime_h"], "torch 2.13's _find_rocm_home finds TheRock's headers"
    assert seen["notice"]["status"] == "inconclusive"

    Path(venv["lld"]).write_text("#!/bin/sh\n")  # the SDK's linker, where Triton does not look
    seen = check_row(venv["python"], tmp_path)
    assert seen["row"]["status"] == "affected" and venv["lld"] in seen["row"]["reason"]
    fixed = check_row(venv["python"], tmp_path, TRITON_HIP_LLD_PATH=venv["lld"])
    assert fixed["row"]["status"] == "ok" and venv["lld"] in fixed["row"]["reason"], fixed["row"]["reason"]


def test_a_triton_that_links_in_process_needs_no_ld_lld(tmp_path: Path):
    venv = rocm_venv(tmp_path, DATA / "triton-3.5.1-backends-amd-compiler.py.txt", lld=False)
    seen = check_row(venv["python"], tmp_path)
    assert seen["row"]["status"] == "ok" and "links in process" in seen["row"]["reason"], seen["row"]


def test_a_rocm_home_without_the_math_libraries_headers_is_likely(tmp_path: Path):
    """ROCM_HOME at TheRock's core (torch 2.13's `_find_rocm_home`), the math libraries' headers only in
    the devel package beside it (ROCm/pytorch#3636): likely, naming where they are; ROCM_HOME there: ok."""
    venv = rocm_venv(tmp_path, DATA / "triton-3.5.1-backends-amd-compiler.py.txt", lld=False,
                     math_in_core=False)
    seen = check_row(venv["python"], tmp_path)
    assert seen["row"]["status"] == "likely", seen["row"]
    assert "hipblas/hipblas.h" in seen["row"]["reason"] and "_rocm_sdk_devel" in seen["row"]["reason"]
    assert seen["rocm"]["hipblas_h"] is None and seen["rocm"]["math_headers_elsewhere"]
    fixed = check_row(venv["python"], tmp_path, ROCM_HOME=venv["devel"])
    assert fixed["row"]["status"] == "ok", fixed["row"]["reason"]


@pytest.mark.envs
def test_the_released_triton_wheel_without_ld_lld(tmp_path: Path):
    """Triton 3.4.0's whole wheel (its AMD backend as released), installed by
    tests/envs/build_platforms.sh."""
    if not (TRITON_WHEEL_ENV / ".ready").exists():
        msg = "run tests/envs/build_platforms.sh (pip installs triton==3.4.0 into a cached target)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    venv = rocm_venv(tmp_path, None, lld=False, triton_site=TRITON_WHEEL_ENV / "site")
    seen = check_row(venv["python"], tmp_path)
    assert seen["row"]["status"] == "affected", seen["row"]["reason"]
    assert seen["rocm"]["backend_source"].endswith("triton/backends/amd/compiler.py")
    fixed = check_row(venv["python"], tmp_path, TRITON_HIP_LLD_PATH=venv["lld"] if Path(venv["lld"]).exists()
                      else "/nonexistent")
    assert fixed["row"]["status"] == "affected"  # a variable naming nothing is no linker either


# --- a Visual Studio layout ---------------------------------------------------------------------------


def visual_studio(root: Path, languages=(1033, 2052)) -> Dict[str, str]:
    msvc = root / "Microsoft Visual Studio" / "2022" / "BuildTools" / "VC" / "Tools" / "MSVC" / "14.44.35207"
    for target in ("x64", "x86"):
        folder = msvc / "bin" / "Hostx64" / target
        folder.mkdir(parents=True)
        (folder / "cl.exe").write_bytes(b"MZ")
        for lcid in languages:
            (folder / str(lcid)).mkdir()
            (folder / str(lcid) / "clui.dll").write_bytes(b"MZ")
    return {"ProgramFiles(x86)": str(root), "x64": str(msvc / "bin" / "Hostx64" / "x64"),
            "x86": str(msvc / "bin" / "Hostx64" / "x86")}


def test_an_x86_developer_prompt_read_from_a_visual_studio_layout(tmp_path: Path):
    vs = visual_studio(tmp_path)
    env = {"ProgramFiles(x86)": vs["ProgramFiles(x86)"], "PATH": vs["x86"], "INCLUDE": "C:\\inc",
           "LIB": "C:\\lib",
           "VSCMD_ARG_HOST_ARCH": "x64", "VSCMD_ARG_TGT_ARCH": "x86", "VSLANG": "2052"}
    win = gather_windows(env, torch_path=str(SYSTEM_TORCH), system_facts=False)
    assert (win.cl_host, win.cl_target, win.cl_version) == ("x64", "x86", "14.44.35207")
    assert win.cl_languages == [1033, 2052] and win.toolsets[0].hosts == ["Hostx64/x64", "Hostx64/x86"]
    assert win.long_paths_enabled is None and win.ansi_code_page is None, "the registry is Windows' alone"
    facts = windows()
    facts.platform.windows = win
    o = registry().find("msvc-not-activated").rule(facts)[0]
    assert o.status is Status.AFFECTED and "Hostx64\\x86" in o.reason.replace("/", "\\"), o.reason
    o = registry().find("compiler-output-encoding").rule(facts)[0]
    assert o.status is Status.AFFECTED and "Chinese" in o.reason, o.reason


def test_msvc_installed_not_activated_and_cc_a_folder(tmp_path: Path):
    vs = visual_studio(tmp_path, languages=(1033,))
    facts = windows()
    facts.platform.windows = gather_windows({"ProgramFiles(x86)": vs["ProgramFiles(x86)"], "PATH": ""},
                                            system_facts=False)
    o = registry().find("msvc-not-activated").rule(facts)[0]
    assert o.status is Status.AFFECTED and "but not activated: no cl on PATH" in o.reason, o.reason
    facts.platform.windows = gather_windows({"PATH": vs["x64"], "INCLUDE": "i", "LIB": "l", "CC": vs["x64"]},
                                            system_facts=False)
    assert facts.platform.windows.cc_problem == "a folder"
    o = registry().find("msvc-not-activated").rule(facts)[0]
    assert o.status is Status.AFFECTED and "is a folder" in o.reason, o.reason


# --- the probe -----------------------------------------------------------------------------------------


def test_the_platform_probe_takes_milliseconds():
    target = {"platform": sys.platform, "machine": "x86_64", "include_dir": "/usr/include/python3",
              "executable": sys.executable, "site_packages": []}
    from inductor_doctor.probe.caches import gather_caches

    caches: CacheInfo = gather_caches()
    platforms.gather(target, dict(os.environ), None, None, caches)  # warm
    start = time.perf_counter()
    for _ in range(20):
        info = platforms.gather(target, dict(os.environ), None, None, caches)
    each = (time.perf_counter() - start) / 20
    assert info.paths and each < 0.05, f"{each * 1000:.1f} ms a gather"
