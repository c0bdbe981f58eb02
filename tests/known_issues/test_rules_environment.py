"""The environment-failure catalog, judged without a broken machine.

Where the broken state needs hardware or software this machine lacks (a GPU, an old driver or
compiler, an old libstdc++), the rules are fed facts describing it, with the real torch and Triton
files wherever a rule reads them, and the upstream error texts go through the same classifier and
triage the CLI uses. `test_catalog_states.py` puts the machine into the broken states it can.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest
from conftest import ENVS, run_cli, venv_python

from inductor_doctor.check.engine import classify
from inductor_doctor.check.runner import CanaryJob, CanaryRun
from inductor_doctor.core.facts import (
    CacheDirInfo,
    CacheInfo,
    CompilerInfo,
    CudaInfo,
    Facts,
    GPUInfo,
    PythonInfo,
    TorchInfo,
    TritonInfo,
)
from inductor_doctor.core.model import Basis, KnownIssue, Severity, Status
from inductor_doctor.kb import registry
from inductor_doctor.probe.caches import gather_caches, mount_of, read_mounts
from inductor_doctor.triage.engine import LogInput, triage_text

CATALOG = (
    "triton-missing", "triton-version-skew", "gpu-too-old-for-triton", "triton-ptxas-driver",
    "ptxas-unsupported-arch", "libcuda-not-found", "triton-no-c-compiler", "python-headers-missing",
    "cxx-compiler-missing", "openmp-headers-missing", "compiler-too-old", "libstdcxx-too-old",
    "python-unsupported-by-dynamo", "clang-on-linux", "small-gpu-no-autotune-gemm", "cache-dir-noexec",
    "cache-dir-unwritable", "torch-cpu-only-build",
)  # fmt: skip

SYSTEM_TORCH = Path(__import__("importlib.util").util.find_spec("torch").origin).parent
SYSTEM_TORCH_VERSION = (re.search(r"__version__ = '([^']+)'", (SYSTEM_TORCH / "version.py").read_text()) or
                        re.search("(.*)", "?")).group(1)


def site(env: str) -> Path:
    return ENVS / env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def torch_dir(env: Optional[str], version: Optional[str] = None) -> Path:
    """torch's package directory in a cached venv (skip when not built), or the system one (skip
    when it is not the `version` the test reads)."""
    if env is None:
        if version and not SYSTEM_TORCH_VERSION.startswith(version):
            pytest.skip(f"reads torch {version}'s source; this interpreter has torch {SYSTEM_TORCH_VERSION}")
        return SYSTEM_TORCH
    path = site(env) / "torch"
    if not path.is_dir():
        pytest.skip(f"test venv {env} missing: run tests/envs/build.sh {env}")
    return path


def in_venv(*values):
    """A case that reads a cached venv: it runs with the `envs` tests, after .ci/run builds them."""
    return pytest.param(*values, marks=pytest.mark.envs)


def triton_dir(env: str) -> Path:
    path = site(env) / "triton"
    if not path.is_dir():
        pytest.skip(f"test venv {env} missing: run tests/envs/build.sh {env}")
    return path


def issue(id_: str) -> KnownIssue:
    found = registry().find(id_)
    assert found is not None, id_
    return found


def gcc(version: str = "12.2.0", **kw) -> CompilerInfo:
    base = dict(command="g++", path="/usr/bin/g++", kind="gcc", version=version, works=True, openmp=True,
                python_h=True)
    base.update(kw)
    return CompilerInfo(**base)


def make_facts(torch_version: Optional[str] = "2.13.0+cpu", torch_path: Optional[Path] = SYSTEM_TORCH,
               cuda: Optional[str] = None, triton: Optional[TritonInfo] = None,
               gpus: Optional[List[GPUInfo]] = None, python: str = "3.11.7", **kw) -> Facts:
    torch = None
    if torch_version:
        torch = TorchInfo(version=torch_version, path=str(torch_path) if torch_path else None, cuda=cuda)
    facts = Facts(
        python=PythonInfo(executable=sys.executable, version=python, platform="linux", include_dir="/inc",
                          has_python_h=True, libstdcxx_path="/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                          libstdcxx_glibcxx_max="3.4.30"),
        torch=torch,
        triton=triton,
        cuda=CudaInfo(gpus=list(gpus or [])),
        cxx=gcc(),
        cc=gcc(command="gcc", path="/usr/bin/gcc", openmp=None),
    )
    for key, value in kw.items():
        setattr(facts, key, value)
    return facts


def outcomes(id_: str, facts: Facts):
    rule = issue(id_).rule
    assert rule is not None
    return rule(facts)


def only(id_: str, facts: Facts):
    out = outcomes(id_, facts)
    assert len(out) == 1, out
    return out[0]


def h100(index: int = 0) -> GPUInfo:
    return GPUInfo(index=index, name="NVIDIA H100 80GB HBM3", sm="9.0", sm_count=132)


# --- the catalog as a whole ---------------------------------------------------------------------


def test_catalog_is_registered_with_pages_and_unique_refs():
    reg = registry()
    for id_ in CATALOG:
        found = reg.find(id_)
        assert found is not None and found.source == "builtin", id_
    assert len(reg) >= 20
    assert reg.plugin_errors == [] or all(name != "<builtin>" for name, _ in reg.plugin_errors)


def test_only_the_is_big_gpu_issue_is_a_warning():
    warnings = {i for i in CATALOG if issue(i).severity is Severity.WARNING}
    assert warnings == {"small-gpu-no-autotune-gemm"}


def test_rules_never_raise_on_empty_facts():
    """`None` is unknown, never a crash: the bare facts of an interpreter without torch."""
    bare = Facts(python=PythonInfo(executable=sys.executable, version="3.11.7"))
    for id_ in CATALOG:
        for o in outcomes(id_, bare):
            assert o.status in (Status.NOT_APPLICABLE, Status.INCONCLUSIVE), (id_, o)


# --- Triton side -------------------------------------------------------------------------------


def test_triton_missing_with_and_without_gpu():
    no_triton = make_facts(torch_version="2.9.0+cu128", cuda="12.8")
    no_triton.torch.triton_requirement = 'triton==3.5.0; platform_system == "Linux"'
    assert only("triton-missing", no_triton).status is Status.LIKELY
    no_triton.cuda.gpus = [h100()]
    o = only("triton-missing", no_triton)
    assert o.status is Status.AFFECTED and "TritonMissing" in o.reason and "triton==3.5.0" in o.reason
    broken = make_facts(torch_version="2.9.0+cu128", cuda="12.8", gpus=[h100()],
                        triton=TritonInfo(version="3.5.0", import_ok=False, import_error="ImportError: libx"))
    assert only("triton-missing", broken).status is Status.AFFECTED
    assert only("triton-missing", make_facts()).status is Status.NOT_APPLICABLE  # CPU-only torch


@pytest.mark.envs
def test_triton_version_skew_reads_attrs_descriptor_from_the_sources():
    """torch 2.6.0's hints.py against Triton 3.3.1 (no AttrsDescriptor) and 3.2.0 (has it)."""
    t26 = torch_dir("xla-2.6.0")
    skew = make_facts(torch_version="2.6.0+cu124", torch_path=t26, cuda="12.4",
                      triton=TritonInfo(version="3.3.1", path=str(triton_dir("catalog-triton-skew"))))
    skew.torch.triton_pin = "==3.2.0"
    o = only("triton-version-skew", skew)
    assert o.status is Status.LIKELY and o.basis is Basis.STATIC and "AttrsDescriptor" in o.reason
    paired = make_facts(torch_version="2.6.0+cu124", torch_path=t26, cuda="12.4",
                        triton=TritonInfo(version="3.2.0", path=str(triton_dir("xla-2.6.0"))))
    paired.torch.triton_pin = "==3.2.0"
    assert only("triton-version-skew", paired).status is Status.OK


def test_triton_version_skew_by_version_and_for_cpu_builds():
    newer = make_facts(torch_version="2.7.0+cu126", torch_path=None, cuda="12.6",
                       triton=TritonInfo(version="3.4.0"))
    newer.torch.triton_pin = "==3.3.0"
    o = only("triton-version-skew", newer)
    assert o.status is Status.LIKELY and o.basis is Basis.VERSION and "3.3.0" in o.reason
    patch = make_facts(torch_version="2.7.1+cu126", torch_path=None, cuda="12.6",
                       triton=TritonInfo(version="3.3.0"))
    patch.torch.triton_pin = "==3.3.1"
    assert only("triton-version-skew", patch).status is Status.OK
    cpu = make_facts(triton=TritonInfo(version="3.1.0"))  # a CPU torch pins nothing: the release table
    assert only("triton-version-skew", cpu).status is Status.OK


def test_gpu_too_old_per_device_and_plan():
    facts = make_facts(torch_version="2.5.1+cu124", cuda="12.4",
                       gpus=[h100(0), GPUInfo(index=1, name="Tesla P100-PCIE-16GB", sm="6.0")])
    by_device = {o.device: o for o in outcomes("gpu-too-old-for-triton", facts)}
    assert by_device["cuda:0"].status is Status.OK
    assert by_device["cuda:1"].status is Status.AFFECTED and "sm_60" in by_device["cuda:1"].reason
    assert only("gpu-too-old-for-triton", make_facts()).status is Status.NOT_APPLICABLE


@pytest.mark.envs
def test_driver_older_than_triton_ptxas():
    """The real CUDA 12.4 ptxas of Triton 3.2.0 against a driver that speaks CUDA 11.4 / 12.2."""
    tdir = triton_dir("xla-2.6.0")
    ptxas = tdir / "backends" / "nvidia" / "bin" / "ptxas"
    tri = TritonInfo(version="3.2.0", path=str(tdir), bundled_ptxas=str(ptxas))
    facts = make_facts(torch_version="2.6.0+cu124", cuda="12.4", triton=tri, gpus=[h100()])
    from inductor_doctor.probe import ptxas as ptxas_probe

    facts.cuda.ptxas_binaries = ptxas_probe.gather(tri, {}, facts.gpus)  # what the probe reads of it
    facts.cuda.driver_version, facts.cuda.driver_cuda_version = "470.82.01", "11.4"
    o = only("triton-ptxas-driver", facts)
    assert o.status is Status.LIKELY and "12.4" in o.reason and o.device == "cuda:0"
    facts.cuda.driver_version, facts.cuda.driver_cuda_version = "535.104.05", "12.2"
    assert only("triton-ptxas-driver", facts).status is Status.OK  # minor-version compatibility
    facts.cuda.gpus, facts.cuda.driver_version = [], None
    assert only("triton-ptxas-driver", facts).status is Status.NOT_APPLICABLE


@pytest.mark.envs
def test_ptxas_arch_scan_of_the_real_binaries():
    """Triton 3.2.0 bundles CUDA 12.4 only; Triton 3.3.1 adds a CUDA 12.8 ptxas-blackwell."""
    gpus = [h100(0), GPUInfo(index=1, name="RTX 5090", sm="12.0"), GPUInfo(index=2, name="GB10", sm="12.1")]
    from inductor_doctor.probe import ptxas as ptxas_probe

    old = make_facts(torch_version="2.6.0+cu124", cuda="12.4", gpus=gpus,
                     triton=TritonInfo(version="3.2.0", path=str(triton_dir("xla-2.6.0"))))
    old.cuda.ptxas_binaries = ptxas_probe.gather(old.triton, {}, gpus)  # the binaries, asked
    got = {o.device: o.status for o in outcomes("ptxas-unsupported-arch", old)}
    assert got == {"cuda:0": Status.OK, "cuda:1": Status.AFFECTED, "cuda:2": Status.AFFECTED}
    new = make_facts(torch_version="2.6.0+cu124", cuda="12.4", gpus=gpus,
                     triton=TritonInfo(version="3.3.1", path=str(triton_dir("catalog-triton-skew"))))
    new.cuda.ptxas_binaries = ptxas_probe.gather(new.triton, {}, gpus)
    res = {o.device: o for o in outcomes("ptxas-unsupported-arch", new)}
    assert res["cuda:1"].status is Status.OK and "ptxas-blackwell" in res["cuda:1"].reason
    assert res["cuda:2"].status is Status.AFFECTED and "sm_121" in res["cuda:2"].reason


def test_ptxas_arch_version_table_when_the_binary_is_unreadable(tmp_path):
    """A ptxas that is there but cannot be run here (another architecture's build, say) is judged by
    its release; one that is not there at all is judged by nothing (a static ok never rests on a
    path that does not exist)."""
    binary = tmp_path / "ptxas"
    binary.write_bytes(b"\x7fELF not for this machine")
    tri = TritonInfo(version="3.1.0", path=str(tmp_path), bundled_ptxas=str(binary),
                     bundled_ptxas_version="12.4")
    facts = make_facts(torch_version="2.5.1+cu124", cuda="12.4", triton=tri,
                       gpus=[GPUInfo(index=0, name="B200", sm="10.0"), h100(1)])
    facts.env["TRITON_PTXAS_PATH"] = str(binary)
    facts.cuda.ptxas_path, facts.cuda.ptxas_version = str(binary), "12.4"
    got = {o.device: (o.status, o.basis) for o in outcomes("ptxas-unsupported-arch", facts)}
    assert got == {"cuda:0": (Status.LIKELY, Basis.VERSION), "cuda:1": (Status.OK, Basis.VERSION)}
    binary.unlink()
    gone = {o.device: o for o in outcomes("ptxas-unsupported-arch", facts)}
    assert {o.status for o in gone.values()} == {Status.INCONCLUSIVE} and len(gone) == 2
    assert f"is not there: {binary}" in gone["cuda:1"].reason


def test_libcuda_cases(tmp_path):
    tri = TritonInfo(version="3.2.0")
    facts = make_facts(torch_version="2.6.0+cu124", cuda="12.4", triton=tri, gpus=[h100()])
    facts.cuda.driver_version = "550.54.14"
    facts.cuda.libcuda_paths, facts.cuda.libcuda_so_unversioned = [], False
    assert "cannot found" in only("libcuda-not-found", facts).reason
    facts.cuda.libcuda_paths = ["/usr/lib/x86_64-linux-gnu/libcuda.so.1"]
    o = only("libcuda-not-found", facts)
    assert o.status is Status.AFFECTED and "-lcuda" in o.reason
    facts.cuda.libcuda_so_unversioned = True
    assert only("libcuda-not-found", facts).status is Status.OK
    (tmp_path / "libcuda.so").write_text("")  # a file by that name, but no library
    facts.cuda.libcuda_so_unversioned = False
    facts.env["TRITON_LIBCUDA_PATH"] = str(tmp_path)
    assert only("libcuda-not-found", facts).status is Status.AFFECTED
    (tmp_path / "libcuda.so").write_bytes(Path(os.path.realpath(sys.executable)).read_bytes()[:64])
    assert only("libcuda-not-found", facts).status is Status.OK
    no_driver = make_facts(torch_version="2.6.0+cu124", cuda="12.4", triton=tri)
    assert only("libcuda-not-found", no_driver).status is Status.NOT_APPLICABLE


def test_libcuda_from_triton_3_6_needs_no_plain_link_and_triton_2_1_ignores_the_variable(tmp_path):
    """Triton 3.6 links -l:libcuda.so.1 (backends/nvidia/driver.py: libraries = ['libcuda.so.1']);
    Triton 2.0-2.1 do not read TRITON_LIBCUDA_PATH."""
    facts = make_facts(torch_version="2.10.0+cu128", cuda="12.8", triton=TritonInfo(version="3.6.0"),
                       gpus=[h100()])
    facts.cuda.driver_version = "570.86.15"
    so1 = ["/usr/lib/x86_64-linux-gnu/libcuda.so.1"]
    facts.cuda.libcuda_paths, facts.cuda.libcuda_so_unversioned = so1, False
    o = only("libcuda-not-found", facts)
    assert o.status is Status.OK and "-l:libcuda.so.1" in o.reason
    old = make_facts(torch_version="2.1.2+cu121", cuda="12.1", triton=TritonInfo(version="2.1.0"),
                     gpus=[h100()])
    old.cuda.driver_version = "570.86.15"
    old.cuda.libcuda_paths, old.cuda.libcuda_so_unversioned = so1, False
    (tmp_path / "libcuda.so").write_text("")
    old.env["TRITON_LIBCUDA_PATH"] = str(tmp_path)  # ignored by Triton 2.1: the ldconfig dir decides
    assert only("libcuda-not-found", old).status is Status.AFFECTED


def test_triton_c_compiler_from_probe_facts():
    facts = make_facts(torch_version="2.5.1+cu124", cuda="12.4", triton=TritonInfo(version="3.1.0"))
    facts.cc = CompilerInfo(command=None, works=False, chosen_by="triton get_cc default",
                            error="Failed to find C compiler (Triton looks for CC, gcc, clang)")
    assert only("triton-no-c-compiler", facts).status is Status.LIKELY
    facts.cuda.gpus = [h100()]
    assert only("triton-no-c-compiler", facts).status is Status.AFFECTED
    facts.cc = gcc(command="gcc", path="/usr/bin/gcc")
    assert only("triton-no-c-compiler", facts).status is Status.OK


@pytest.mark.envs
@pytest.mark.parametrize("cc", ["/usr/bin", "/opt/nonexistent/gcc"])
def test_triton_runs_a_cc_that_names_nothing_and_triage_names_it(cc, tmp_path):
    """Triton's real launcher build (triton/runtime/build.py `_build`, Triton 3.9) with CC naming a folder
    or a stale path: Python's PermissionError / FileNotFoundError out of it, which triage calls this issue."""
    python = venv_python("xtarget-triton-3.9.0")
    src = tmp_path / "main.c"
    src.write_text("int x;\n")
    code = ("import sys; from triton.runtime.build import _build; "
            "_build('main', sys.argv[1], sys.argv[2], [], [], [], [])")
    proc = subprocess.run([python, "-c", code, str(src), str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CC": cc})
    assert proc.returncode != 0 and "check_call(cc_cmd" in proc.stderr, proc.stderr[-1500:]
    data = proc.stderr.encode()
    result = triage_text(LogInput("triton-build", data, len(data)), list(registry()))
    assert {m.issue.id: m.confidence for m in result.matched} == {"triton-no-c-compiler": "exact"}


@pytest.mark.parametrize("cc", ["/usr/bin", "/opt/gcc-11/bin/gcc", "/usr/bin//usr/bin/gcc"])
def test_triton_cc_naming_nothing_runnable(cc):
    """CC set to a folder, a stale path or a path joined onto another: the probe resolves nothing, and
    Triton runs CC as it is, so the error is Python's (FileNotFoundError / PermissionError), not "Failed
    to find C compiler" (reproduced with Triton 3.9's _build)."""
    facts = make_facts(torch_version="2.9.0+cu128", cuda="12.8", triton=TritonInfo(version="3.5.0"))
    facts.cuda.gpus = [h100()]
    facts.cc = CompilerInfo(command=cc, works=False, chosen_by="CC", error=f"{cc}: not an executable")
    o = only("triton-no-c-compiler", facts)
    assert o.status is Status.AFFECTED
    assert f"CC={cc}" in o.reason and "FileNotFoundError" in o.reason and "Failed to find" not in o.reason


# --- C/C++ toolchain ---------------------------------------------------------------------------


def test_python_headers_from_probe_facts():
    facts = make_facts()
    facts.python.has_python_h = False
    o = only("python-headers-missing", facts)
    assert o.status is Status.AFFECTED and "/inc" in o.reason
    facts.python.has_python_h = True
    facts.cxx = gcc(python_h=False, notes=["Python.h: fatal error"])
    assert only("python-headers-missing", facts).status is Status.AFFECTED
    facts.cxx = gcc(works=False, python_h=False)  # a broken compiler is cxx-compiler-missing's
    assert only("python-headers-missing", facts).status is Status.OK


def test_openmp_from_probe_facts():
    facts = make_facts()
    facts.cxx = CompilerInfo(command="clang++-16", path="/usr/bin/clang++-16", kind="clang", version="16.0.6",
                             works=True, openmp=False, notes=["OpenMP: fatal error: 'omp.h' file not found"])
    o = only("openmp-headers-missing", facts)
    assert o.status is Status.AFFECTED and "libomp-16-dev" in o.reason and "omp.h" in o.reason
    facts.cxx = CompilerInfo(command="g++", works=False)
    assert only("openmp-headers-missing", facts).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(
    "env,torch_version,kind,version,status",
    [
        (None, "2.13.0", "gcc", "9.4.0", Status.AFFECTED),  # -std=c++20 needs GCC 10
        (None, "2.13.0", "gcc", "12.2.0", Status.OK),
        (None, "2.13.0", "clang", "9.0.1", Status.AFFECTED),
        in_venv("xla-2.5.1", "2.5.1", "gcc", "8.3.0", Status.AFFECTED),  # c10/util/C++17.h: GCC 9
        in_venv("xla-2.5.1", "2.5.1", "gcc", "9.4.0", Status.OK),
        in_venv("xla-2.5.1", "2.5.1", "clang", "8.0.1", Status.AFFECTED),
    ],
)
def test_compiler_floor_read_from_torch(env, torch_version, kind, version, status):
    facts = make_facts(torch_version=torch_version, torch_path=torch_dir(env, torch_version))
    facts.cxx = gcc(version) if kind == "gcc" else CompilerInfo(
        command="clang++", path="/usr/bin/clang++", kind="clang", version=version, works=True)
    assert only("compiler-too-old", facts).status is status


def test_libstdcxx_prediction():
    facts = make_facts()
    facts.python.libstdcxx_path = "/opt/conda/lib/libstdc++.so.6"
    facts.python.libstdcxx_glibcxx_max = "3.4.29"
    o = only("libstdcxx-too-old", facts)
    assert o.status is Status.LIKELY and "GLIBCXX_3.4.30" in o.reason
    facts.python.libstdcxx_glibcxx_max = "3.4.32"
    assert only("libstdcxx-too-old", facts).status is Status.OK
    facts.cxx = gcc("11.4.0")
    facts.python.libstdcxx_glibcxx_max = "3.4.29"
    assert only("libstdcxx-too-old", facts).status is Status.OK


@pytest.mark.envs
def test_clang_taken_for_gcc_by_torch_2_6():
    clang = CompilerInfo(command="clang++-16", path="/usr/bin/clang++-16", kind="clang", version="16.0.6",
                         works=True, openmp=False)
    facts = make_facts(torch_version="2.6.0+cu124", torch_path=torch_dir("xla-2.6.0"))
    facts.cxx = clang
    o = only("clang-on-linux", facts)
    assert o.status is Status.AFFECTED and "fno-tree-loop-vectorize" in o.reason
    facts = make_facts(torch_version="2.5.1+cu124", torch_path=torch_dir("xla-2.5.1"))
    facts.cxx = clang
    assert only("clang-on-linux", facts).status is Status.LIKELY
    facts = make_facts()
    facts.cxx = clang
    assert only("clang-on-linux", facts).status is Status.OK
    facts.cxx = gcc()
    assert only("clang-on-linux", facts).status is Status.NOT_APPLICABLE


# --- Python, GPUs, caches ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "env,torch_version,python,gil_disabled,status",
    [
        (None, "2.13.0", "3.11.7", False, Status.OK),
        (None, "2.13.0", "3.13.1", True, Status.AFFECTED),  # free-threaded below 3.13.3
        (None, "2.13.0", "3.13.5", True, Status.OK),
        in_venv("xla-2.5.1", "2.5.1", "3.13.0", False, Status.AFFECTED),
        in_venv("xla-2.6.0", "2.6.0", "3.13.5", True, Status.AFFECTED),  # 2.6 refuses every GIL-free build
        in_venv("torch-2.9-nodeps", "2.9.0", "3.14.0", False, Status.AFFECTED),
    ],
)
def test_dynamo_python_gate_read_from_torch(env, torch_version, python, gil_disabled, status):
    facts = make_facts(torch_version=torch_version, torch_path=torch_dir(env, torch_version), python=python)
    facts.python.gil_disabled = gil_disabled
    o = only("python-unsupported-by-dynamo", facts)
    assert o.status is status and o.basis is Basis.STATIC, o.reason


def test_dynamo_python_gate_table_without_files():
    facts = make_facts(torch_version="2.3.1", torch_path=None, python="3.12.1")
    o = only("python-unsupported-by-dynamo", facts)
    assert (o.status, o.basis) == (Status.AFFECTED, Basis.VERSION) and "3.12+" in o.reason


@pytest.mark.parametrize("sm_count,big,status", [
    (48, None, Status.AFFECTED), (66, None, Status.AFFECTED), (68, None, Status.OK), (132, None, Status.OK),
    (None, False, Status.AFFECTED), (None, None, Status.INCONCLUSIVE),
])
def test_is_big_gpu_threshold_from_torch(sm_count, big, status):
    gpu = GPUInfo(index=0, name="GPU", sm="8.9", sm_count=sm_count, big_gpu=big)
    facts = make_facts(torch_version="2.13.0+cu130", cuda="13.0", gpus=[gpu])
    o = only("small-gpu-no-autotune-gemm", facts)
    assert o.status is status and o.device == "cuda:0"
    if status is Status.AFFECTED and sm_count:
        assert "68" in o.reason


def test_cpu_only_torch_on_a_gpu_host():
    facts = make_facts(gpus=[h100()])
    o = only("torch-cpu-only-build", facts)
    assert o.status is Status.AFFECTED and "CPU-only" in o.reason
    assert only("torch-cpu-only-build", make_facts()).status is Status.NOT_APPLICABLE


def _caches(**dirs) -> CacheInfo:
    return CacheInfo(dirs=[CacheDirInfo(name=n, path=f"/c/{n}", **kw) for n, kw in dirs.items()])


def test_cache_rules_from_facts():
    facts = make_facts()
    facts.caches = _caches(inductor=dict(writable=True, mount_point="/tmp", fs_type="tmpfs",
                                         mount_options=["rw", "nosuid", "noexec"]))
    assert only("cache-dir-noexec", facts).status is Status.AFFECTED
    assert only("cache-dir-unwritable", facts).status is Status.OK
    facts.caches = _caches(inductor=dict(writable=True, mount_point="/", fs_type="ext4",
                                         mount_options=["rw"]),
                           triton=dict(writable=False, error="/ is mounted read-only", mount_point="/",
                                       fs_type="ext4", mount_options=["ro"]))
    assert only("cache-dir-unwritable", facts).status is Status.OK  # Triton's only counts with Triton
    facts.triton = TritonInfo(version="3.1.0")
    assert only("cache-dir-unwritable", facts).status is Status.AFFECTED


def test_cache_probe_follows_the_environment(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"tmpfs {tmp_path} tmpfs rw,noexec 0 0\n/dev/x / ext4 rw 0 0\n")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "a" / "b"), "HOME": str(tmp_path)}
    info = gather_caches(env, mounts_file=str(mounts))
    ind, tri = info.dirs
    assert ind.path == str(tmp_path / "a" / "b") and ind.source == "TORCHINDUCTOR_CACHE_DIR"
    assert ind.exists is False and ind.writable is True and "noexec" in ind.mount_options
    assert tri.path == os.path.join(str(tmp_path), ".triton", "cache")
    assert mount_of("/proc/self", read_mounts())[1] == "proc"


# --- the upstream error texts ------------------------------------------------------------------

ERROR_TEXTS = {
    "triton-missing": "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. "
                      "Either the package is not installed or it is too old. More information on "
                      "installing Triton can be found at: https://github.com/triton-lang/triton",
    "triton-version-skew": "ImportError: cannot import name 'AttrsDescriptor' from "
                           "'triton.compiler.compiler' (/venv/lib/python3.11/site-packages/triton/compiler/"
                           "compiler.py)",
    "gpu-too-old-for-triton": "torch._inductor.exc.GPUTooOldForTriton: Found Tesla P100-PCIE-16GB which is "
                              "too old to be supported by the triton GPU compiler, which is used as the "
                              "backend. Triton only supports devices of CUDA Capability >= 7.0, but your "
                              "device is of CUDA capability 6.0",
    "triton-ptxas-driver": "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
    "ptxas-unsupported-arch": "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
    "libcuda-not-found": "AssertionError: libcuda.so cannot found!\nPossible files are located at "
                         "['/usr/lib/x86_64-linux-gnu/libcuda.so.1'].Please create a symlink of libcuda.so "
                         "to any of the files.",
    "triton-no-c-compiler": "RuntimeError: Failed to find C compiler. Please specify via CC environment "
                            "variable.",
    "python-headers-missing": "/tmp/tmpabc/main.c:5:10: fatal error: Python.h: No such file or directory\n"
                              "    5 | #include <Python.h>\ncompilation terminated.",
    "cxx-compiler-missing": "torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in "
                            "torch._inductor.config.cpp.cxx: (None, 'g++')",
    "openmp-headers-missing": "/tmp/torchinductor_u/x.cpp:2:10: fatal error: 'omp.h' file not found\n"
                              "#include <omp.h>",
    "compiler-too-old": "torch/include/c10/util/C++17.h:13:2: error: #error \"You're trying to build PyTorch "
                        "with a too old version of GCC. We need GCC 9 or later.\"",
    "libstdcxx-too-old": "ImportError: /opt/conda/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
                         "(required by /tmp/torchinductor_u/ab/cab.so)",
    "python-unsupported-by-dynamo": "RuntimeError: Dynamo is not supported on Python 3.12+",
    "clang-on-linux": "clang: error: unknown argument: '-fno-tree-loop-vectorize'",
    "small-gpu-no-autotune-gemm": "W1122 torch/_inductor/utils.py:1049] Not enough SMs to use "
                                  "max_autotune_gemm mode",
    "cache-dir-noexec": "ImportError: /tmp/torchinductor_u/kz/ckz.so: failed to map segment from shared "
                        "object",
    "cache-dir-unwritable": "PermissionError: [Errno 13] Permission denied: '/tmp/torchinductor_alice'",
    "torch-cpu-only-build": "AssertionError: Torch not compiled with CUDA enabled",
}


def test_every_catalog_issue_has_an_upstream_text_here():
    assert set(ERROR_TEXTS) == set(CATALOG)


@pytest.mark.parametrize("id_", CATALOG)
def test_error_text_is_the_issues_own_signature(id_):
    """What a canary failing with that text would be classified as: affected, for this issue only."""
    text = ERROR_TEXTS[id_]
    job = CanaryJob(key=f"{id_}@x", script=Path("x.py"), device="cuda:0", python=sys.executable, timeout_s=1)
    run = CanaryRun(job=job, returncode=0, timed_out=False, interrupted=False, duration_s=0.1, stdout="",
                    stderr="", result={"status": "error", "exc_type": "RuntimeError", "message": text})
    status, reason, _ = classify(issue(id_), run)
    assert status is Status.AFFECTED, reason
    for other in CATALOG:
        if other != id_:
            assert classify(issue(other), run)[0] is not Status.AFFECTED, (other, text)


def test_triage_of_the_upstream_texts_through_the_cli(tmp_path):
    """`explain --log` ranks the right issue first for each text (one CLI run per text)."""
    for id_, text in ERROR_TEXTS.items():
        log = tmp_path / f"{id_}.log"
        log.write_text("Traceback (most recent call last):\n  ...\n" + text + "\n")
        proc = run_cli(["explain", "--log", str(log), "--format", "json"])
        assert proc.returncode == 0, (id_, proc.stderr[-500:])
        results = json.loads(proc.stdout)["results"]
        assert results and results[0]["id"] == id_, (id_, [r["id"] for r in results])


# --- plan: predictions before anything is installed ---------------------------------------------


@pytest.mark.parametrize(
    "args,expected",
    [
        (["torch==2.6.0", "triton==3.2.0", "--gpu", "sm_120", "--cxx", "g++-8"],
         {"ptxas-unsupported-arch": "affected", "compiler-too-old": "affected"}),
        (["torch==2.7.1", "--gpu", "sm_121", "--cxx", "clang++-19"], {"ptxas-unsupported-arch": "affected"}),
        (["torch==2.5.1", "--python-version", "3.13", "--gpu", "sm_61"],
         {"python-unsupported-by-dynamo": "affected", "gpu-too-old-for-triton": "affected"}),
        (["torch==2.6.0", "triton==3.3.1"], {"triton-version-skew": "affected"}),
        (["torch==2.13.0", "--gpu", "sm_90", "--cxx", "g++-12", "--python-version", "3.11"], {}),
    ],
)
def test_plan_predicts_the_catalog(args, expected):
    """The predictions from versions; what a `--cxx` compiler that is on this machine answers when
    probed ("probed here", this machine's) is tests/commands/test_plan_answers.py's."""
    proc = run_cli(["plan", *args, "--format", "json"])
    results = json.loads(proc.stdout)["results"]
    flagged = {r["id"]: r["status"] for r in results if r["status"] in ("affected", "likely")
               and r["id"] in CATALOG and r["basis"] == "version"}
    assert flagged == expected, [r["reason"] for r in results if r["id"] in flagged]


def test_canary_code_does_not_quote_its_own_signatures():
    """Tracebacks quote the failing line, comments included: a signature there would self-match."""
    import ast

    for id_ in CATALOG:
        canary = issue(id_).canary
        if canary is None:
            continue
        from inductor_doctor.target import canary_path

        source = canary_path(canary.script).read_text()
        doc = ast.get_docstring(ast.parse(source), clean=False) or ""
        code = source.replace(doc, "", 1)
        for sig in issue(id_).signatures:
            if sig.strength == "exact":
                assert not sig.search(code), (id_, sig.pattern)
