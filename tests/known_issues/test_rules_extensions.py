"""Prebuilt extensions against this torch (extension-torch-mismatch, extension-gpu-arch-missing), judged
from recorded facts and from real ELF files.

The facts below were recorded by the probe on real wheels installed beside torch 2.13.0+cpu
(tests/envs/build_extensions.sh): fbgemm-gpu-cpu 1.3.0, a CPU build for torch 2.8, whose
fbgemm_gpu_config.so the loader refuses with "undefined symbol: _ZNR5torch7Library4_def..."; torchao
0.15.0, a CUDA 12 build whose libraries link libc10_cuda.so; fbgemm-gpu-cpu 1.8.0, built for 2.13,
which loads. The reader itself runs here on torch's own test libraries, real ELF files that link
libtorch. `test_states_extensions.py` (-m envs) runs the whole check on the real wheels.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from test_rules_environment import SYSTEM_TORCH, make_facts, only

from inductor_doctor.core.facts import ExtensionLib, ExtensionScan
from inductor_doctor.core.model import Basis, Status
from inductor_doctor.probe import _elf, extensions

SITE = "/venv/lib/python3.11/site-packages"
#: What the probe read from fbgemm-gpu-cpu 1.3.0's fbgemm_gpu_config.so beside torch 2.13.0+cpu.
FBGEMM_130 = ExtensionLib(
    path=f"{SITE}/fbgemm_gpu/fbgemm_gpu_config.so", distribution="fbgemm-gpu-cpu", version="1.3.0",
    torch_needed=["libc10.so", "libtorch.so", "libtorch_cpu.so"], torch_symbols=25,
    missing_symbols=["_ZNR5torch7Library4_defEOSt7variantIJN3c1012OperatorNameENS2_14FunctionSchemaEEEONS_11C"
                     "ppFunctionERKSt6vectorIN2at3TagESaISB_EE"],
    missing_count=1)
#: torchao 0.15.0's _C.abi3.so: a CUDA 12 build.
TORCHAO_0150 = ExtensionLib(
    path=f"{SITE}/torchao/_C.abi3.so", distribution="torchao", version="0.15.0",
    torch_needed=["libc10.so", "libtorch.so", "libtorch_cpu.so", "libc10_cuda.so", "libtorch_cuda.so"],
    missing_libs=["libc10_cuda.so", "libtorch_cuda.so"], torch_symbols=62,
    missing_symbols=["_ZN2at4cuda26getCurrentDevicePropertiesEv", "_ZN3c104cuda12device_countEv"],
    missing_count=16, cudart="12", cuda_archs=["sm_80", "sm_86"])
#: fbgemm-gpu-cpu 1.8.0, built for torch 2.13: every torch symbol resolves.
FBGEMM_180 = ExtensionLib(
    path=f"{SITE}/fbgemm_gpu/fbgemm_gpu_py.so", distribution="fbgemm-gpu-cpu", version="1.8.0",
    torch_needed=["libc10.so", "libtorch.so", "libtorch_cpu.so"], torch_symbols=870)


def facts_with(*libs: ExtensionLib, cuda=None, complete=True, **kw):
    scan = ExtensionScan(libs=list(libs), files=170, complete=complete)
    return make_facts(cuda=cuda, extensions=scan, **kw)


def test_a_library_importing_a_symbol_torch_lacks_is_affected_and_named():
    out = only("extension-torch-mismatch", facts_with(FBGEMM_130, FBGEMM_180))
    assert (out.status, out.basis) == (Status.AFFECTED, Basis.STATIC), out
    assert "fbgemm-gpu-cpu 1.3.0" in out.reason, out.reason
    assert "fbgemm_gpu_config.so imports _ZNR5torch7Library4_def" in out.reason
    assert "'undefined symbol: _ZNR5torch7Library4_def" in out.reason
    assert "1.8.0" not in out.reason  # another package's library that loads is not blamed


def test_a_cuda_build_beside_a_cpu_torch_is_affected_for_its_missing_libraries():
    out = only("extension-torch-mismatch", facts_with(TORCHAO_0150))
    assert out.status is Status.AFFECTED
    assert "links libc10_cuda.so, libtorch_cuda.so" in out.reason and "built for a CUDA torch" in out.reason
    assert "'libc10_cuda.so: cannot open shared object file'" in out.reason


def test_a_pin_on_another_torch_is_likely_when_its_symbols_resolve():
    pinned = ExtensionLib(**{**vars(FBGEMM_180), "distribution": "vllm", "version": "0.11.0",
                             "torch_requirement": "==2.8.0"})
    out = only("extension-torch-mismatch", facts_with(pinned))
    assert (out.status, out.basis) == (Status.LIKELY, Basis.VERSION), out
    assert "vllm 0.11.0 requires torch==2.8.0" in out.reason
    satisfied = ExtensionLib(**{**vars(FBGEMM_180), "torch_requirement": ">=2.13,<2.14"})
    assert only("extension-torch-mismatch", facts_with(satisfied)).status is Status.OK


def test_another_cuda_runtime_major_is_likely():
    lib = ExtensionLib(**{**vars(FBGEMM_180), "cudart": "12"})
    out = only("extension-torch-mismatch", facts_with(lib, cuda="13.0", torch_version="2.13.0+cu130"))
    assert out.status is Status.LIKELY and "libcudart.so.12" in out.reason and "CUDA 13.0" in out.reason


def test_resolving_libraries_are_ok_none_is_not_applicable_and_a_cut_scan_is_inconclusive():
    ok = only("extension-torch-mismatch", facts_with(FBGEMM_180))
    assert ok.status is Status.OK and "fbgemm-gpu-cpu 1.8.0" in ok.reason
    assert only("extension-torch-mismatch", facts_with()).status is Status.NOT_APPLICABLE
    cut = only("extension-torch-mismatch", facts_with(FBGEMM_180, complete=False))
    assert cut.status is Status.INCONCLUSIVE and "time ran out" in cut.reason
    assert only("extension-torch-mismatch", make_facts()).status is Status.INCONCLUSIVE  # not read
    assert only("extension-torch-mismatch", make_facts(torch_version=None)).status is Status.NOT_APPLICABLE


def test_the_advice_names_the_packages_that_cannot_load():
    from inductor_doctor.kb import registry

    issue = registry().find("extension-torch-mismatch")
    assert issue is not None and issue.advise is not None
    first = issue.advise(facts_with(FBGEMM_130, TORCHAO_0150))[0]
    assert "fbgemm-gpu-cpu torchao" in first.text and "torch 2.13.0+cpu" in first.text


# --- the reader, on real ELF files ----------------------------------------------------------------

TEST_LIBS = ("libtorchbind_test.so", "libjitbackend_test.so", "libaoti_custom_ops.so")


def torch_test_library() -> Path:
    for name in TEST_LIBS:
        path = SYSTEM_TORCH / "lib" / name
        if path.is_file():
            return path
    pytest.skip(f"torch {SYSTEM_TORCH} ships none of {TEST_LIBS}")


def test_the_reader_finds_what_a_real_library_needs_and_what_a_smaller_torch_lacks(tmp_path):
    import shutil

    lib_path = Path(shutil.copy(torch_test_library(), tmp_path))  # away from torch's libraries beside it
    needed, _ = _elf.dynamic_entries(str(lib_path))
    assert any(extensions.TORCH_LIB.match(n) for n in needed), needed
    names = sorted(os.listdir(SYSTEM_TORCH / "lib"))
    with ExitStack() as stack:
        whole = extensions.read_library(str(lib_path), extensions._Lookup(str(SYSTEM_TORCH / "lib"), names,
                                                                          stack))
    assert whole.error is None and whole.torch_symbols > 0 and whole.missing_count == 0, whole
    # The same library against a "torch" of libc10 alone: what libtorch_cpu defines is missing.
    with ExitStack() as stack:
        small = extensions.read_library(str(lib_path), extensions._Lookup(str(SYSTEM_TORCH / "lib"),
                                                                          ["libc10.so"], stack))
    assert small.missing_count > 0 and small.missing_libs, small
    assert all(_elf.TORCH_SYMBOL.match(s) for s in small.missing_symbols)


def test_a_scan_of_this_interpreter_leaves_torch_out_and_a_repeat_costs_milliseconds():
    from inductor_doctor.probe import packages, target, torch_build

    described = target.query(sys.executable, 30)
    torch_info = torch_build.torch_info(described, packages.packages(described))
    first = extensions.scan(described, torch_info, 30)
    assert first is not None and first.complete
    assert all(lib.distribution not in extensions.SKIP for lib in first.libs)
    start = time.monotonic()
    again = extensions.scan(described, torch_info, 30)
    took = time.monotonic() - start
    assert again is not None and [vars(x) for x in again.libs] == [vars(x) for x in first.libs]
    assert took < 0.25, f"a repeated scan took {took:.3f}s"


def test_requirements_on_torch_are_read_from_metadata(tmp_path):
    info = tmp_path / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nRequires-Dist: numpy\n"
                                   "Requires-Dist: torch (>=2.14.0)\n"
                                   "Requires-Dist: torch==2.1; extra == 'old'\n"
                                   "\nRequires-Dist: torch==9 in the description\n")
    assert extensions.torch_requirement(str(info)) == ">=2.14.0"
    (info / "METADATA").write_text("Name: pkg\nRequires-Dist: torch==2.9.0; platform_system == 'Linux'\n")
    assert extensions.torch_requirement(str(info)) == "==2.9.0"


# --- extension-gpu-arch-missing: torchao 0.15.0's libraries, as the probe read their .nv_fatbin -------

def torchao_0150(*names: str):
    """torchao 0.15.0's four libraries with the GPU code the probe read from each."""
    code = {"_C.abi3.so": (["sm_80", "sm_86"], []), "_C_cutlass_90a.abi3.so": (["sm_90a"], []),
            "_C_cutlass_100a.abi3.so": (["sm_100a"], []),
            "_C_mxfp8.cpython-310-x86_64-linux-gnu.so": (["sm_100"], ["compute_120"])}
    return [ExtensionLib(path=f"{SITE}/torchao/{n}", distribution="torchao", version="0.15.0",
                         torch_needed=["libtorch.so"], cuda_archs=code[n][0], ptx_archs=code[n][1])
            for n in names or code]


def gpu(name: str, sm: str):
    from inductor_doctor.core.facts import GPUInfo

    return GPUInfo(index=0, name=name, sm=sm)


@pytest.mark.parametrize("name,sm,status,says", [
    ("Tesla T4", "7.5", Status.AFFECTED, "torchao 0.15.0 (_C.abi3.so has sm_80 sm_86)"),
    ("NVIDIA H100 80GB HBM3", "9.0", Status.LIKELY, "_C.abi3.so, _C_mxfp8"),
    ("NVIDIA GeForce RTX 4090", "8.9", Status.LIKELY, "_C_mxfp8"),
    ("NVIDIA B200", "10.0", Status.LIKELY, "_C.abi3.so (_C.abi3.so has sm_80 sm_86)"),
    ("NVIDIA GeForce RTX 5090", "12.0", Status.LIKELY, "_C.abi3.so"),
])
def test_extension_gpu_code_is_judged_per_gpu_with_variant_libraries_set_apart(name, sm, status, says):
    facts = facts_with(*torchao_0150(), cuda="12.8", torch_version="2.9.1+cu128", gpus=[gpu(name, sm)])
    out = only("extension-gpu-arch-missing", facts)
    assert (out.status, out.device) == (status, "cuda:0"), out
    assert says in out.reason, out.reason
    assert "_C_cutlass_90a" not in out.reason  # a variant for one GPU is never blamed on another


def test_extension_gpu_code_ok_through_a_cubin_or_ptx_and_not_applicable_without_gpu_code():
    only_c = torchao_0150("_C.abi3.so")
    ok = only("extension-gpu-arch-missing", facts_with(*only_c, gpus=[gpu("NVIDIA A10", "8.6")]))
    assert ok.status is Status.OK and "torchao 0.15.0 carry code for NVIDIA A10 (sm_86)" in ok.reason
    ptx = [ExtensionLib(path=f"{SITE}/x/_C.so", distribution="x", version="1", cuda_archs=["sm_80"],
                        ptx_archs=["compute_80"])]
    jit = only("extension-gpu-arch-missing", facts_with(*ptx, gpus=[gpu("NVIDIA H100", "9.0")]))
    assert jit.status is Status.OK and "through PTX" in jit.reason, jit.reason
    none = only("extension-gpu-arch-missing", facts_with(FBGEMM_180, gpus=[gpu("NVIDIA H100", "9.0")]))
    assert none.status is Status.NOT_APPLICABLE
    assert only("extension-gpu-arch-missing", facts_with(*only_c)).status is Status.NOT_APPLICABLE  # no GPU
