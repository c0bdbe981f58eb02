"""The platform issues (Windows, ROCm, XPU) on recorded facts of hosts this machine is not.

Each test describes a host the way the probe would: a Windows host with the default cache under a
long user folder and LongPathsEnabled=0, a user name with a space, MSVC installed but not activated
or activated for x86, a Chinese cl, a pip/TheRock ROCm without /opt/rocm, an XPU build without its
Level Zero headers. Where a rule reads a release's own file (how torch builds its cl command), the
fact comes from the real file: the installed torch's cpp_builder.py, and the released Triton AMD
backends kept in tests/data/platforms/. The platform table is checked on every platform: a row it
does not read there says "not checked", never ok.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest
from test_rules_environment import SYSTEM_TORCH, make_facts, only

from inductor_doctor.core.facts import (
    Facts,
    MsvcToolset,
    PlatformInfo,
    RocmInfo,
    WindowsInfo,
    XpuInfo,
)
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.kb._platforms import COVERAGE, MACOS, ROCM, WINDOWS, XPU, platforms_of
from inductor_doctor.probe.rocm import lld_search
from inductor_doctor.probe.windows import path_fact, read_inductor_cl_command

DATA = Path(__file__).resolve().parent.parent / "data" / "platforms"
VS = r"C:\Program Files\Microsoft Visual Studio\2022\BuildTools\VC\Tools\MSVC\14.44.35207"
CL_X64 = VS + r"\bin\Hostx64\x64\cl.exe"
CL_X86 = VS + r"\bin\Hostx64\x86\cl.exe"
DEFAULT_CACHE = r"C:\Users\{}\AppData\Local\Temp\torchinductor_{}"


def windows(torch: str = "2.13.0+cu128", user: str = "alex", cache: Optional[str] = None,
            **win) -> Facts:
    """A Windows host as the probe describes it; `win` sets WindowsInfo's fields, with an activated
    x64 MSVC and the installed torch's real cl command as the defaults."""
    facts = make_facts(torch_version=torch, cuda="12.8" if "+cu" in torch else None)
    facts.python.platform, facts.python.machine = "win32", "AMD64"
    fields = dict(long_paths_enabled=False, triton_temp_dir=51, cl_on_path=CL_X64, cl_host="x64",
                  cl_target="x64", cl_version="14.44.35207", cl_languages=[1033], include_set=True,
                  lib_set=True,
                  toolsets=[MsvcToolset("14.44.35207", VS, ["Hostx64/x64", "Hostx64/x86"], [1033])],
                  inductor_cl=read_inductor_cl_command(str(SYSTEM_TORCH)))
    fields.update(win)
    cache = cache or DEFAULT_CACHE.format(user, user)
    facts.platform = PlatformInfo(system="win32", machine="AMD64", windows=WindowsInfo(**fields), paths=[
        path_fact("inductor cache", cache), path_fact("python include", r"C:\Python311\Include"),
        path_fact("torch", r"C:\Python311\Lib\site-packages\torch")])
    return facts


# --- windows-long-paths ------------------------------------------------------------------------------


def test_long_paths_off_with_the_default_cache_is_likely():
    o = only("windows-long-paths", windows(user="alexandra.m"))
    assert o.status is Status.LIKELY, o.reason
    assert "LongPathsEnabled is 0" in o.reason and "pytorch#187283" in o.reason


def test_long_paths_off_under_a_long_cache_is_affected():
    deep = r"D:\Projects\ComfyUI_windows_portable_nvidia\ComfyUI_windows_portable\ComfyUI\temp\torch_cache"
    o = only("windows-long-paths", windows(cache=deep))
    assert o.status is Status.AFFECTED and "even a short fused kernel" in o.reason, o.reason


@pytest.mark.parametrize("win,says", [
    ({"long_paths_enabled": True}, "LongPathsEnabled is 1"),
    ({"triton_long_paths": True}, "\\\\?\\"),
])
def test_long_paths_are_lifted(win, says):
    o = only("windows-long-paths", windows(**win))
    assert o.status is Status.OK and says in o.reason, o.reason


def test_a_short_cache_leaves_room_for_long_kernel_names():
    o = only("windows-long-paths", windows(cache=r"C:\ti"))
    assert o.status is Status.OK and "leaves" in o.reason, o.reason


def test_windows_issues_do_not_apply_elsewhere():
    facts = make_facts()
    for issue in ("windows-long-paths", "windows-path-characters", "msvc-not-activated",
                  "compiler-output-encoding"):
        o = only(issue, facts)
        assert o.status is Status.NOT_APPLICABLE and "not Windows" in o.reason, (issue, o.reason)


# --- windows-path-characters -------------------------------------------------------------------------


def test_the_installed_torch_cpp_builder_is_read():
    """The real cpp_builder.py of the torch here (2.13): /I quoted, sources and /Fe not, decoding in
    the ANSI code page with "replace", a non-English MSVC refused."""
    cl = read_inductor_cl_command(str(SYSTEM_TORCH))
    assert cl is not None
    assert (cl.quotes_include_dirs, cl.quotes_sources, cl.quotes_output) == (True, False, False)
    assert cl.decodes_output_as == "locale, replace" and cl.refuses_non_english is True


def test_a_user_name_with_a_space_splits_the_sources():
    o = only("windows-path-characters", windows(user="Emad Younan"))
    assert o.status is Status.AFFECTED, o.reason
    assert "torchinductor_Emad Younan" in o.reason and "/Fe" in o.reason


def test_python_under_program_files_only_before_torch_2_7():
    facts = windows(user="alex")
    facts.platform.paths[1] = path_fact("python include", r"C:/Program Files/Python310/Include")
    assert only("windows-path-characters", facts).status is Status.OK  # this torch quotes /I
    facts.platform.windows.inductor_cl.quotes_include_dirs = False  # as torch 2.6's cpp_builder.py
    o = only("windows-path-characters", facts)
    assert o.status is Status.AFFECTED and "Program Files" in o.reason, o.reason


def test_no_space_is_ok_and_names_non_ascii():
    facts = windows(user="张伟")
    o = only("windows-path-characters", facts)
    assert o.status is Status.OK and "non-ASCII" in o.reason, o.reason


# --- msvc-not-activated ------------------------------------------------------------------------------


def test_msvc_installed_but_not_activated():
    tcc = r"C:\py\triton\runtime\tcc\tcc.exe"
    o = only("msvc-not-activated", windows(cl_on_path=None, cl_host=None, cl_target=None, cl_version=None,
                                           include_set=False, lib_set=False, tcc=tcc))
    assert o.status is Status.AFFECTED, o.reason
    assert "14.44.35207 is installed" in o.reason and "Compiler: cl is not found" in o.reason
    assert "TinyCC" in o.reason


def test_no_msvc_at_all_is_cxx_compiler_missings_case():
    o = only("msvc-not-activated", windows(cl_on_path=None, toolsets=[], include_set=False, lib_set=False))
    assert o.status is Status.NOT_APPLICABLE and "cxx-compiler-missing" in o.reason


@pytest.mark.parametrize("win,says", [
    ({"cl_on_path": CL_X86, "cl_target": "x86"}, "Hostx64\\x86"),
    ({"vscmd_tgt_arch": "x86", "cl_target": None}, "VSCMD_ARG_TGT_ARCH"),
    ({"cc": r"C:\VS\bin\Hostx64\x64", "cc_problem": "a folder"}, "Access is denied"),
    ({"cc": r"C:\old\cl.exe", "cc_problem": "missing"}, "Failed to compile. cc_cmd"),
    ({"include_set": False}, "INCLUDE/LIB unset"),
])
def test_msvc_activated_wrongly(win, says):
    o = only("msvc-not-activated", windows(**win))
    assert o.status is Status.AFFECTED and says in o.reason, o.reason


def test_an_old_cl_is_likely_and_an_activated_one_ok():
    old_cl = CL_X64.replace("14.44.35207", "14.28.29333")
    old = only("msvc-not-activated", windows(cl_version="14.28.29333", cl_on_path=old_cl))
    assert old.status is Status.LIKELY and "19.28" in old.reason, old.reason
    ok = only("msvc-not-activated", windows())
    assert ok.status is Status.OK and "cl 19.44" in ok.reason and "Hostx64\\x64" in ok.reason, ok.reason


# --- compiler-output-encoding ------------------------------------------------------------------------


def test_a_chinese_cl_is_affected_on_every_torch():
    facts = windows(cl_languages=[2052], ui_language=2052, ansi_code_page=936)
    o = only("compiler-output-encoding", facts)
    assert o.status is Status.AFFECTED and "Chinese" in o.reason and "English language pack" in o.reason
    facts.platform.windows.inductor_cl.refuses_non_english = False  # as torch 2.8's cpp_builder.py
    facts.platform.windows.inductor_cl.decodes_output_as = "utf-8"
    o = only("compiler-output-encoding", facts)
    assert o.status is Status.AFFECTED and "UnicodeDecodeError" in o.reason, o.reason


def test_vslang_picks_english_where_its_pack_is_installed():
    o = only("compiler-output-encoding", windows(cl_languages=[1033, 2052], ui_language=2052, vslang="1033"))
    assert o.status is Status.OK, o.reason


@pytest.mark.parametrize("win,status", [
    ({"cl_on_path": None}, Status.NOT_APPLICABLE),
    ({"cl_languages": []}, Status.INCONCLUSIVE),
])
def test_without_a_cl_or_its_packs(win, status):
    assert only("compiler-output-encoding", windows(**win)).status is status


# --- rocm-toolchain-layout ---------------------------------------------------------------------------


def rocm_facts(**fields) -> Facts:
    facts = make_facts(torch_version="2.7.1+rocm6.3")
    facts.torch.hip = "6.3.42131"
    sdk = "/venv/lib/python3.12/site-packages/_rocm_sdk_core"
    base = dict(opt_rocm=False, sdk_roots=[sdk], backend_source="/venv/.../triton/backends/amd/compiler.py",
                lld_search=lld_search((DATA / "triton-3.4.0-backends-amd-compiler.py.txt").read_text())[0],
                links_in_process=False, lld=None, lld_elsewhere=[sdk + "/lib/llvm/bin/ld.lld"],
                rocm_home="/venv", rocm_home_how="the folder above /venv/bin/hipcc", torch_knows_sdk=False,
                hip_runtime_h=None, hip_headers_elsewhere=[sdk + "/include/hip/hip_runtime.h"])
    base.update(fields)
    facts.platform = PlatformInfo(system="linux", rocm=RocmInfo(**base))
    return facts


def test_the_released_backends_lld_search_is_read():
    """The real backends/amd/compiler.py of Triton 3.4.0 and 3.5.1 (from their wheels)."""
    search, in_process = lld_search((DATA / "triton-3.4.0-backends-amd-compiler.py.txt").read_text())
    assert search == ["$TRITON_HIP_LLD_PATH", "<backend>/llvm/bin/ld.lld", "/opt/rocm/llvm/bin/ld.lld",
                      "/usr/bin/ld.lld"] and in_process is False
    assert lld_search((DATA / "triton-3.5.1-backends-amd-compiler.py.txt").read_text()) == ([], True)


def test_pip_rocm_without_opt_rocm_is_affected_and_names_the_linker_there():
    facts = rocm_facts()
    o = only("rocm-toolchain-layout", facts)
    assert o.status is Status.AFFECTED, o.reason
    assert "/opt/rocm/llvm/bin/ld.lld" in o.reason and "_rocm_sdk_core/lib/llvm/bin/ld.lld" in o.reason
    assert "hip_runtime.h" in o.reason
    first = registry().find("rocm-toolchain-layout").advise(facts)[0]
    assert first.command == f'export TRITON_HIP_LLD_PATH="{facts.platform.rocm.lld_elsewhere[0]}"'
    assert first.command.endswith('_rocm_sdk_core/lib/llvm/bin/ld.lld"')


def test_triton_that_links_in_process_leaves_only_the_headers():
    o = only("rocm-toolchain-layout", rocm_facts(links_in_process=True, lld_search=[]))
    assert o.status is Status.LIKELY and "torch.compile itself does not need them" in o.reason, o.reason
    o = only("rocm-toolchain-layout", rocm_facts(links_in_process=True, lld_search=[], torch_knows_sdk=True,
                                                 rocm_home="/sdk",
                                                 hip_runtime_h="/sdk/include/hip/hip_runtime.h",
                                                 hipblas_h="/sdk/include/hipblas/hipblas.h"))
    assert o.status is Status.OK, o.reason


def test_a_rocm_home_without_the_math_libraries_headers():
    """TheRock's core has hipcc and the HIP runtime's headers, its devel package the math libraries'
    (ROCm/pytorch#3636): a ROCM_HOME at the core builds torch.compile's kernels, not an extension that
    includes hipblas/hipblas.h."""
    sdk = "/venv/lib/python3.12/site-packages"
    o = only("rocm-toolchain-layout", rocm_facts(
        links_in_process=True, lld_search=[], torch_knows_sdk=True, rocm_home=sdk + "/_rocm_sdk_core",
        hip_runtime_h=sdk + "/_rocm_sdk_core/include/hip/hip_runtime.h", hipblas_h=None,
        math_headers_elsewhere=[sdk + "/_rocm_sdk_devel/include/hipblas/hipblas.h"]))
    assert o.status is Status.LIKELY, o.reason
    assert "hipblas/hipblas.h" in o.reason and "_rocm_sdk_devel/include/hipblas/hipblas.h" in o.reason


def test_not_a_rocm_torch():
    assert only("rocm-toolchain-layout", make_facts()).status is Status.NOT_APPLICABLE


# --- xpu-driver-pairing ------------------------------------------------------------------------------


def xpu_facts(**fields) -> Facts:
    facts = make_facts(torch_version="2.8.0+xpu")
    base = dict(torch_xpu="20250101", ze_loader="/usr/lib/x86_64-linux-gnu/libze_loader.so.1",
                ze_loader_version="1.21.9", ze_driver="/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1",
                ze_driver_version="1.6.32567", igc_version="2.10.8",
                ze_headers="/usr/include/level_zero/ze_api.h",
                ze_header_search=["/usr/local/include", "/usr/include"], sycl="intel-sycl-rt 2025.1.1")
    base.update(fields)
    facts.platform = PlatformInfo(system="linux", xpu=XpuInfo(**base))
    return facts


@pytest.mark.parametrize("missing,says", [
    ({"ze_loader": None}, "Level Zero loader"),
    ({"ze_headers": None}, "LEVEL_ZERO_V1_SDK_PATH"),
    ({"sycl": None}, "sycl headers not found"),
])
def test_xpu_stack_with_a_part_missing(missing, says):
    o = only("xpu-driver-pairing", xpu_facts(**missing))
    assert o.status is Status.AFFECTED and says in o.reason, o.reason


def test_a_whole_xpu_stack_is_not_checked_for_its_pairing_never_ok():
    o = only("xpu-driver-pairing", xpu_facts())
    assert o.status is Status.INCONCLUSIVE and "not checked" in o.reason, o.reason


# --- the platform table ------------------------------------------------------------------------------


def _on(platform: str) -> Facts:
    if platform == WINDOWS:
        return windows()
    if platform == ROCM:
        return rocm_facts()
    if platform == XPU:
        return xpu_facts()
    facts = make_facts(torch_version="2.9.0")
    facts.python.platform = "darwin"
    return facts


@pytest.mark.parametrize("platform", [WINDOWS, MACOS, ROCM, XPU])
def test_every_row_says_how_it_is_decided_and_not_checked_is_never_ok(platform):
    facts = _on(platform)
    assert platforms_of(facts)[0] == [platform]
    not_checked: List[str] = []
    for issue in registry():
        if issue.rule is None or issue.source != "builtin":
            continue
        for o in issue.rule(facts):
            if o.reason.startswith(f"not checked on {platform}"):
                not_checked.append(issue.id)
                assert o.status is Status.INCONCLUSIVE, (issue.id, o)
    named = {i for i, (how, _why) in COVERAGE[platform].items() if how == "not-checked"}
    assert named <= set(not_checked)
    pnc = only("platform-not-covered", facts)
    assert pnc.status is Status.INCONCLUSIVE
    listed = next(line for line in pnc.details["evidence"] if line.startswith("not checked"))
    assert all(i in listed for i in not_checked), (listed, not_checked)


def test_on_linux_the_table_changes_nothing():
    facts = make_facts()
    for issue in registry():
        wrapped = getattr(issue.rule, "__wrapped__", None)
        if wrapped is not None and issue.source == "builtin" and issue.id != "platform-not-covered":
            assert list(issue.rule(facts)) == list(wrapped(facts)), issue.id
    assert only("platform-not-covered", facts).status is Status.OK


def test_rows_the_table_names_exist():
    ids = {i.id for i in registry()}
    for platform, rows in COVERAGE.items():
        assert set(rows) <= ids, (platform, set(rows) - ids)
