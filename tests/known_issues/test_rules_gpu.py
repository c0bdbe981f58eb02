"""The GPU/CUDA issues, judged on recorded facts and on the real files of the cached venvs.

No GPU here: what only a GPU host shows was recorded on one (tests/data/gpu/h100_host.json: an
H100, driver 580.159.04, torch 2.11.0+cu130: nvidia-smi's answers and what torch counted for each
CUDA_VISIBLE_DEVICES value, each in a fresh process), and the probe must agree with it. Everything
that is a file here (torch's libraries, the nvidia-* wheels, a CUDA 12.1 libnvJitLink, the CUDA
toolkit in /usr/local) is read for real. tests/known_issues/test_states_gpu.py runs the CLI in the broken
states this machine can be put in; tests/known_issues/test_on_gpu_catalog.py and tests/gpu_states.sh the rest,
on a GPU host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from conftest import ENVS, venv_python
from test_rules_environment import SYSTEM_TORCH, make_facts, site, torch_dir

from inductor_doctor.check.engine import CheckOptions, run_checks
from inductor_doctor.core.facts import (
    CudaInfo,
    CudaLibInfo,
    CudaToolkitInfo,
    Facts,
    GPUInfo,
    PythonInfo,
    TritonInfo,
)
from inductor_doctor.core.model import Basis, KnownIssue, Severity, Status
from inductor_doctor.kb import registry
from inductor_doctor.kb._gpus import support
from inductor_doctor.probe import cuda_arch, cuda_libs, cuda_toolkit, cuda_visible, gpu_catalog, live
from inductor_doctor.probe.cuda import parse_gpu_csv
from inductor_doctor.render.probe_text import probe_to_text

GPU_CATALOG = ("torch-gpu-arch-missing", "cuda-devices-hidden", "cuda-driver-too-old", "cuda-libs-shadowed",
               "cuda-toolkit-missing", "triton-shared-memory")
RECHECKED = ("gpu-too-old-for-triton", "small-gpu-no-autotune-gemm", "libcuda-not-found",
             "triton-ptxas-driver")
H100_HOST = json.loads((Path(__file__).resolve().parents[1] / "data" / "gpu" / "h100_host.json").read_text())
CUDA121_LIBS = ENVS / "catalog-cuda121-libs" / "lib"
CU124 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def issue(id_: str) -> KnownIssue:
    found = registry().find(id_)
    assert found is not None, id_
    return found


def outcomes(id_: str, facts: Facts):
    rule = issue(id_).rule
    assert rule is not None
    return rule(facts)


def only(id_: str, facts: Facts):
    out = outcomes(id_, facts)
    assert len(out) == 1, out
    return out[0]


def by_device(id_: str, facts: Facts):
    return {o.device: o for o in outcomes(id_, facts)}


def gpu(index: int = 0, name: str = "NVIDIA H100 80GB HBM3", sm: str = "9.0", **kw) -> GPUInfo:
    return GPUInfo(index=index, name=name, sm=sm, **kw)


def driver_host(n: int = 4, name: str = "NVIDIA H100 80GB HBM3", sm: str = "9.0") -> List[GPUInfo]:
    """n GPUs as nvidia-smi lists them (the H100's recorded line, with a UUID per GPU)."""
    base = parse_gpu_csv(H100_HOST["nvidia_smi_query"])[0]
    return [GPUInfo(index=i, name=name, sm=sm, memory_mib=base.memory_mib,
                    uuid=f"GPU-{i}{i}{i}{i}c2796-04f9-7157-c0f3-d5d5c76158b{i}") for i in range(n)]


def cuda_facts(torch_version: str = "2.6.0+cu124", cuda: str = "12.4", gpus: Optional[List[GPUInfo]] = None,
               arch: Optional[List[str]] = CU124, driver: str = "550.54.14", driver_cuda: str = "12.4",
               env: Optional[Dict[str, str]] = None, triton: Optional[TritonInfo] = None) -> Facts:
    """A CUDA torch on a host whose driver lists `gpus`, CUDA_VISIBLE_DEVICES from `env` applied."""
    facts = make_facts(torch_version=torch_version, torch_path=None, cuda=cuda, triton=triton)
    facts.cuda = CudaInfo(driver_version=driver, driver_cuda_version=driver_cuda, gpus=list(gpus or []),
                          nvidia_smi="/usr/bin/nvidia-smi")
    facts.torch.cuda_arch_list = arch
    cuda_visible.apply(facts.cuda, env or {})
    facts.env = dict(env or {})
    return facts


# --- the catalog as a whole --------------------------------------------------------------------


def test_registered_with_pages_and_severities():
    for id_ in GPU_CATALOG:
        found = issue(id_)
        assert found.source == "builtin" and found.devices
    warnings = {i for i in GPU_CATALOG if issue(i).severity is Severity.WARNING}
    assert warnings == {"cuda-toolkit-missing", "triton-shared-memory"}


def test_rules_never_raise_on_empty_facts():
    bare = Facts(python=PythonInfo(executable=sys.executable, version="3.11.7"))
    for id_ in GPU_CATALOG + RECHECKED:
        for o in outcomes(id_, bare):
            assert o.status in (Status.NOT_APPLICABLE, Status.INCONCLUSIVE), (id_, o)


# --- what torch will see: CUDA_VISIBLE_DEVICES applied to the driver's list ----------------------


@pytest.mark.parametrize("value", sorted(H100_HOST["CUDA_VISIBLE_DEVICES"]))
def test_visibility_matches_what_torch_counted_on_the_h100(value):
    """Each value, as recorded on the H100 host: the probe must see as many GPUs as torch did."""
    driver = parse_gpu_csv(H100_HOST["nvidia_smi_query"])
    migs = cuda_visible.parse_mig_listing(H100_HOST["nvidia_smi_L"])
    var = None if value == "UNSET" else value
    visible, notes, resolved = cuda_visible.resolve(driver, var, migs)
    assert resolved
    assert len(visible) == H100_HOST["CUDA_VISIBLE_DEVICES"][value]["torch.cuda.device_count"], notes
    if not visible and var:
        assert notes, "a hidden GPU is explained"


def test_visible_gpus_are_renumbered_as_torch_numbers_them():
    info = CudaInfo(gpus=driver_host(4), nvidia_smi="/usr/bin/nvidia-smi")
    cuda_visible.apply(info, {"CUDA_VISIBLE_DEVICES": "2,0"})
    assert [(g.device, g.driver_index) for g in info.gpus] == [("cuda:0", 2), ("cuda:1", 0)]
    assert [g.index for g in info.driver_gpus] == [0, 1, 2, 3]  # the driver's list is kept whole
    assert info.gpus[0].uuid == info.driver_gpus[2].uuid
    assert "cuda:0 = GPU 2" in " ".join(info.notes)


@pytest.mark.parametrize("value,expect,why", [
    ("0,7,1", [0], "7 is not a GPU index here"),  # CUDA stops at the first entry naming no GPU
    ("1,1", [], "repeated"),
    ("", [], "empty"),
    ("-1", [], "'-1' is not a GPU index"),
    ("GPU-2222", [2], None),  # a unique UUID prefix
    ("GPU-", [], "matches more than one GPU"),  # an ambiguous one
    ("GPU-3333,0", [3], "'0' is not a GPU- id"),
    ("GPU-1111,GPU-1111c2796", [], "names the same GPU twice"),
])
def test_visibility_rules_on_a_four_gpu_host(value, expect, why):
    visible, notes, _ = cuda_visible.resolve(driver_host(4), value)
    assert [g.driver_index for g in visible] == expect
    if why:
        assert why in " ".join(notes)


def test_mig_instances_resolve_through_nvidia_smi_l():
    listing = (
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
        "  MIG 3g.20gb     Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)\n"
        "  MIG 3g.20gb     Device  1: (UUID: MIG-1a2b3c4d-42e4-5de3-91c7-45d71c87eb3f)\n"
    )
    migs = cuda_visible.parse_mig_listing(listing)
    driver = [GPUInfo(index=0, name="NVIDIA A100-SXM4-40GB", sm="8.0", memory_mib=40960,
                      uuid="GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77")]
    visible, _, ok = cuda_visible.resolve(driver, "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f", migs)
    assert ok and len(visible) == 1
    assert visible[0].mig and visible[0].name.endswith("MIG 3g.20gb") and visible[0].memory_mib is None
    _, notes, ok = cuda_visible.resolve(driver, "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f", None)
    assert ok is False and "nvidia-smi -L" in notes[0]


def test_mixed_gpus_get_an_order_note_unless_pci_bus_order():
    mixed = [gpu(0, "NVIDIA RTX A4000", "8.6"), gpu(1)]
    assert cuda_visible.order_note(mixed, None) and "PCI_BUS_ID" in cuda_visible.order_note(mixed, None)
    assert cuda_visible.order_note(mixed, "PCI_BUS_ID") is None
    assert cuda_visible.order_note(driver_host(8), None) is None  # identical GPUs: one order


# --- cuda-devices-hidden -----------------------------------------------------------------------


@pytest.mark.parametrize("env,status,words", [
    ({}, Status.OK, "torch sees 4 GPUs of the driver's 4"),
    ({"CUDA_VISIBLE_DEVICES": "1,3"}, Status.OK, "torch sees 2 GPUs"),
    ({"CUDA_VISIBLE_DEVICES": ""}, Status.AFFECTED, "empty"),
    ({"CUDA_VISIBLE_DEVICES": "7"}, Status.AFFECTED, "7 is not a GPU index here"),
    ({"CUDA_VISIBLE_DEVICES": "GPU-deadbeef"}, Status.AFFECTED, "matches no GPU"),
    ({"CUDA_VISIBLE_DEVICES": "0,0"}, Status.AFFECTED, "repeated"),
    ({"CUDA_VISIBLE_DEVICES": "0,1,7,2"}, Status.LIKELY, "torch sees 2 GPUs of the 4 it names"),
    ({"LOCAL_RANK": "5"}, Status.AFFECTED, "LOCAL_RANK=5 but torch sees 4 GPUs"),
    ({"CUDA_VISIBLE_DEVICES": "2", "LOCAL_RANK": "1"}, Status.AFFECTED, "invalid device ordinal"),
    ({"CUDA_VISIBLE_DEVICES": "2", "LOCAL_RANK": "0"}, Status.OK, "torch sees 1 GPU"),
])
def test_devices_hidden_verdicts(env, status, words):
    o = only("cuda-devices-hidden", cuda_facts(gpus=driver_host(4), env=env))
    assert o.status is status and words in o.reason, o.reason
    assert o.device is None  # one verdict for the host: the engine puts it on each row, or on `cuda`


def test_devices_hidden_without_a_driver_or_a_gpu_list():
    assert only("cuda-devices-hidden", make_facts()).status is Status.NOT_APPLICABLE
    facts = cuda_facts(gpus=[])  # the driver is loaded, nvidia-smi did not answer
    assert only("cuda-devices-hidden", facts).status is Status.INCONCLUSIVE
    migs = cuda_facts(gpus=driver_host(1))
    migs.cuda.visible_devices, migs.cuda.visibility_resolved = "MIG-x", False
    migs.cuda.visibility = ["CUDA_VISIBLE_DEVICES names MIG instances and `nvidia-smi -L` did not answer"]
    assert only("cuda-devices-hidden", migs).status is Status.INCONCLUSIVE


def test_no_cuda_row_survives_a_hidden_gpu():
    """The engine makes one row per GPU torch sees: hidden GPUs leave only `cuda`, and it says why."""
    tri = TritonInfo(version="3.2.0")
    hidden = cuda_facts(gpus=driver_host(4), env={"CUDA_VISIBLE_DEVICES": "7"}, triton=tri)
    cuda_ids = [i for i in registry() if any(d.value == "cuda" for d in i.devices)]
    findings = run_checks(hidden, cuda_ids, CheckOptions(python=sys.executable, static=True)).findings
    assert {f.device for f in findings} == {"cuda"}
    rows = {f.id: f for f in findings}
    assert rows["cuda-devices-hidden"].status is Status.AFFECTED
    for id_ in RECHECKED + ("torch-gpu-arch-missing", "triton-shared-memory"):
        assert rows[id_].status is Status.NOT_APPLICABLE, (id_, rows[id_].reason)
        assert "torch sees none of the driver's 4 GPUs" in rows[id_].reason, (id_, rows[id_].reason)
    seen = cuda_facts(gpus=driver_host(4), env={"CUDA_VISIBLE_DEVICES": "3"}, triton=tri)
    findings = run_checks(seen, cuda_ids, CheckOptions(python=sys.executable, static=True)).findings
    assert {f.device for f in findings} == {"cuda:0"}


# --- torch-gpu-arch-missing --------------------------------------------------------------------


@pytest.mark.parametrize("cap,arch,how", [
    (90, CU124, "cubin"), (86, ["sm_80"], "cubin"), (89, ["sm_80", "sm_86"], "cubin"),
    (120, CU124, "none"), (61, ["sm_70", "sm_75"], "none"), (87, ["sm_80", "sm_86"], "none"),  # Orin
    (120, CU124 + ["compute_90"], "ptx"), (90, ["sm_90a"], "cubin"), (100, ["sm_90a", "compute_90a"], "none"),
    (121, H100_HOST["torch"]["get_arch_list"], "cubin"),  # GB10 runs the sm_120 cubins
    (110, H100_HOST["torch"]["get_arch_list"], "none"),
])
def test_arch_support_mirrors_torch_and_ptx(cap, arch, how):
    assert support(cap, arch)[0] == how


def test_arch_missing_verdicts():
    gpus = [gpu(0), gpu(1, "NVIDIA GeForce RTX 5090", "12.0"), gpu(2, "NVIDIA GeForce GTX 1080", "6.1"),
            gpu(3, "mystery", None)]
    got = by_device("torch-gpu-arch-missing", cuda_facts(gpus=gpus))
    assert got["cuda:0"].status is Status.OK and got["cuda:3"].status is Status.INCONCLUSIVE
    o = got["cuda:1"]
    assert o.status is Status.AFFECTED and o.basis is Basis.STATIC
    assert "sm_120" in o.reason and "no kernel image" in o.reason and "sm_50 sm_60" in o.reason
    assert got["cuda:2"].status is Status.OK  # sm_60 cubins run on sm_61
    new = cuda_facts("2.11.0+cu130", "13.0", gpus=gpus[:3], arch=H100_HOST["torch"]["get_arch_list"])
    got = by_device("torch-gpu-arch-missing", new)
    assert got["cuda:1"].status is Status.OK and got["cuda:2"].status is Status.AFFECTED  # Pascal dropped
    ptx = cuda_facts(gpus=gpus[1:2], arch=CU124 + ["compute_90"])
    o = only("torch-gpu-arch-missing", ptx)
    assert o.status is Status.OK and "PTX" in o.reason
    unknown = cuda_facts(gpus=gpus[:1], arch=None)
    assert only("torch-gpu-arch-missing", unknown).status is Status.INCONCLUSIVE
    assert only("torch-gpu-arch-missing", make_facts(gpus=gpus)).status is Status.NOT_APPLICABLE  # CPU torch


@pytest.mark.envs
@pytest.mark.parametrize("env,expect", [
    ("xla-2.5.1", CU124), ("xla-2.6.0", CU124),
    ("torch-2.9-nodeps", ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]),
])
def test_arch_list_read_from_the_real_libraries(env, expect):
    tdir = torch_dir(env)
    got, source, _ = cuda_arch.torch_arch_list(str(tdir))
    assert got == expect and source and source.endswith("libtorch_python.so")
    assert cuda_arch.fatbin_archs(str(tdir / "lib" / "libtorch_cuda.so")) == expect  # the kernels agree


@pytest.mark.envs
def test_arch_list_is_what_torch_itself_says():
    python = venv_python("xla-2.6.0")
    said = subprocess.run([python, "-c", "import torch; print(torch._C._cuda_getArchFlags())"],
                          capture_output=True, text=True, timeout=300, cwd="/")
    assert said.stdout.split() == cuda_arch.torch_arch_list(str(torch_dir("xla-2.6.0")))[0]


def test_no_arch_list_in_a_cpu_torch():
    import importlib.metadata

    if "+cpu" not in importlib.metadata.version("torch"):
        pytest.skip("this machine's torch is not a CPU build")
    assert cuda_arch.torch_arch_list(str(SYSTEM_TORCH)) == (None, None, [])


# --- cuda-driver-too-old -----------------------------------------------------------------------


@pytest.mark.parametrize("driver,driver_cuda,torch_cuda,status", [
    ("470.82.01", "11.4", "12.4", Status.LIKELY),  # found version 11040
    ("535.104.05", "12.2", "13.0", Status.LIKELY),  # found version 12020 under a cu130 wheel
    ("535.104.05", "12.2", "12.8", Status.OK),  # minor-version compatibility
    ("580.65.06", "13.0", "12.8", Status.OK),
    ("580.159.04", "13.0", "13.0", Status.OK),  # the recorded H100 host
])
def test_driver_versions(driver, driver_cuda, torch_cuda, status):
    facts = cuda_facts("2.9.0", torch_cuda, gpus=[gpu()], driver=driver, driver_cuda=driver_cuda)
    o = only("cuda-driver-too-old", facts)
    assert o.status is status and o.basis is Basis.VERSION, o.reason
    if status is Status.LIKELY:
        found = driver_cuda.split(".")
        assert f"found version {int(found[0]) * 1000 + int(found[1]) * 10}" in o.reason


def test_driver_too_old_for_torch_ptx_on_a_gpu_without_cubins():
    facts = cuda_facts("2.6.0", "12.4", gpus=[gpu(0, "RTX 5090", "12.0"), gpu(1)],
                       arch=CU124 + ["compute_90"],
                       driver="535.104.05", driver_cuda="12.2")
    got = by_device("cuda-driver-too-old", facts)
    assert got["cuda:0"].status is Status.LIKELY and "unsupported toolchain" in got["cuda:0"].reason
    assert got["cuda:1"].status is Status.OK


def test_driver_from_the_live_torch_and_from_the_table():
    facts = cuda_facts("2.5.1", "12.4", gpus=[gpu()], driver="470.82.01", driver_cuda="11.4")
    gpu_catalog.merge_live(facts, {"import_ok": True, "cuda_version": "12.4", "cuda_available": False,
                                   "cuda_init_warning": "CUDA initialization: The NVIDIA driver on your "
                                   "system is too old (found version 11040). Please update your GPU driver"})
    o = only("cuda-driver-too-old", facts)
    assert o.status is Status.AFFECTED and "found version 11040" in o.reason
    assert facts.cuda.driver_api_version == 11040
    fine = cuda_facts("2.11.0", "13.0", gpus=[gpu()], driver="580.159.04", driver_cuda="13.0")
    gpu_catalog.merge_live(fine, {"import_ok": True, "cuda_version": "13.0", "cuda_available": True})
    assert only("cuda-driver-too-old", fine).status is Status.OK and fine.cuda.driver_sufficient
    no_smi = cuda_facts("2.9.0", "12.8", gpus=[gpu()], driver="535.104.05", driver_cuda="")
    assert "CUDA 12.2" in only("cuda-driver-too-old", no_smi).reason  # from core/releases.py
    unknown = cuda_facts("2.9.0", "12.8", gpus=[gpu()], driver="", driver_cuda="")
    assert only("cuda-driver-too-old", unknown).status is Status.INCONCLUSIVE
    assert only("cuda-driver-too-old", make_facts()).status is Status.NOT_APPLICABLE


def test_driver_plan_hook():
    from inductor_doctor.core.plan_input import PlanInput

    predict = issue("cuda-driver-too-old").predict
    assert predict is not None
    old = predict(PlanInput(packages={}, python_version="3.12", cuda="13.0", driver="535.104.05"))
    assert old[0].status is Status.AFFECTED and "580.65.06" in old[0].reason
    ok = predict(PlanInput(packages={}, python_version="3.12", cuda="12.8", driver="535.104.05"))
    assert ok[0].status is Status.OK
    assert predict(PlanInput(packages={}, python_version="3.12"))[0].status is Status.NOT_APPLICABLE


# --- cuda-libs-shadowed ------------------------------------------------------------------------


def lib(soname="libnvJitLink.so.12", **kw) -> CudaLibInfo:
    wheel = f"/venv/site-packages/nvidia/nvjitlink/lib/{soname}"
    base = dict(wheel=wheel, resolved=wheel, via="preloaded by torch from its wheel", same_build=True)
    base.update(kw)
    return CudaLibInfo(soname=soname, **base)


def test_libs_shadowed_verdicts_on_recorded_facts():
    facts = cuda_facts(gpus=[gpu()])
    facts.cuda.libs = [lib(), lib("libcudart.so.12")]
    assert only("cuda-libs-shadowed", facts).status is Status.OK
    facts.cuda.libs[0] = lib(resolved="/usr/local/cuda-12.1/lib64/libnvJitLink.so.12", via="LD_LIBRARY_PATH",
                             needed_by="libcusparse.so.12", same_build=False,
                             missing_symbols=["__nvJitLinkComplete_12_4"])
    o = only("cuda-libs-shadowed", facts)
    assert o.status is Status.AFFECTED and "undefined symbol: __nvJitLinkComplete_12_4" in o.reason
    facts.cuda.libs[0].missing_symbols = []
    assert only("cuda-libs-shadowed", facts).status is Status.LIKELY
    facts.cuda.libs[0] = lib(resolved=None, via="not found")
    assert only("cuda-libs-shadowed", facts).status is Status.AFFECTED
    facts.cuda.libs = []
    assert only("cuda-libs-shadowed", facts).status is Status.NOT_APPLICABLE  # conda/system CUDA by design


def _maps(python: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    code = ("import torch, json; print(json.dumps(sorted({l.split()[-1] for l in open('/proc/self/maps') "
            "if '.so' in l.split()[-1]})))")
    full = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    full.update(env)
    return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300, env=full,
                          cwd="/")


def _replay(venv: str, env: Dict[str, str]):
    sp = site(venv)
    exe = os.path.realpath(ENVS / venv / "bin" / "python")
    return cuda_libs.resolve(str(sp / "torch"), [str(sp)], env, exe, "x86_64", "12")


def _cuda121() -> Path:
    if not (CUDA121_LIBS / "libnvJitLink.so.12").exists():
        pytest.skip("CUDA 12.1 libraries missing: run tests/envs/build_gpu_catalog.sh")
    return CUDA121_LIBS


@pytest.mark.envs
@pytest.mark.parametrize("venv,state", [
    ("xla-2.6.0", "normal"), ("xla-2.6.0", "LD_LIBRARY_PATH"), ("xla-2.6.0", "LD_PRELOAD"),
    ("xla-2.5.1", "normal"),
])
def test_the_replay_predicts_what_the_loader_maps(venv, state):
    """The truth is /proc/self/maps after a real `import torch` in the same state."""
    python = venv_python(venv)
    env = {"LD_LIBRARY_PATH": str(_cuda121())} if state == "LD_LIBRARY_PATH" else (
        {"LD_PRELOAD": str(_cuda121() / "libcudart.so.12")} if state == "LD_PRELOAD" else {})
    libs, _ = _replay(venv, env)
    mapped = {os.path.basename(p): os.path.realpath(p) for p in json.loads(_maps(python, env).stdout)}
    compared = [x for x in libs if x.soname in mapped]
    assert len(compared) >= 8, [x.soname for x in libs]
    for x in compared:
        assert x.resolved and os.path.realpath(x.resolved) == mapped[x.soname], (x.soname, x.via)
    cudart = next(x for x in libs if x.soname == "libcudart.so.12")
    if state == "LD_PRELOAD":
        assert cudart.via == "LD_PRELOAD" and cudart.same_build is False
        facts = cuda_facts(gpus=[gpu()])
        facts.cuda.libs = libs
        assert only("cuda-libs-shadowed", facts).status is Status.LIKELY
    else:  # torch's DT_RPATH wins over LD_LIBRARY_PATH for its direct dependencies
        assert cudart.same_build is True and "RPATH" in cudart.via


@pytest.mark.envs
def test_an_older_nvjitlink_breaks_torch_2_5_and_the_replay_says_so():
    python = venv_python("xla-2.5.1")
    env = {"LD_LIBRARY_PATH": str(_cuda121())}
    libs, _ = _replay("xla-2.5.1", env)
    jit = next(x for x in libs if x.soname == "libnvJitLink.so.12")
    assert jit.via == "LD_LIBRARY_PATH" and jit.needed_by == "libcusparse.so.12"
    assert jit.missing_symbols and all(s.endswith("_12_4") for s in jit.missing_symbols)
    real = _maps(python, env)
    assert real.returncode != 0
    assert "undefined symbol: __nvJitLink" in real.stderr and "version libnvJitLink.so.12" in real.stderr
    facts = cuda_facts("2.5.1+cu124", gpus=[gpu()])
    facts.cuda.libs = libs
    o = only("cuda-libs-shadowed", facts)
    assert o.status is Status.AFFECTED and str(CUDA121_LIBS) in o.reason


@pytest.mark.envs
def test_torch_2_6_preloads_its_nvjitlink_in_the_same_state():
    libs, _ = _replay("xla-2.6.0", {"LD_LIBRARY_PATH": str(_cuda121())})
    jit = next(x for x in libs if x.soname == "libnvJitLink.so.12")
    assert jit.via == "preloaded by torch from its wheel" and jit.same_build is True
    facts = cuda_facts(gpus=[gpu()])
    facts.cuda.libs = libs
    assert only("cuda-libs-shadowed", facts).status is Status.OK


@pytest.mark.envs
def test_a_too_old_nvjitlink_wheel_is_found_among_the_wheels():
    """pip put nvidia-nvjitlink-cu12 12.1 under torch 2.6.0: its own copy loads and lacks the symbols."""
    python = venv_python("catalog-nvjitlink-skew")
    libs, _ = _replay("catalog-nvjitlink-skew", {})
    jit = next(x for x in libs if x.soname == "libnvJitLink.so.12")
    assert jit.resolved == jit.wheel and jit.needed_by == "libcusparse.so.12"
    assert jit.missing_symbols and all(s.endswith("_12_4") for s in jit.missing_symbols)
    real = _maps(python, {})
    assert real.returncode != 0 and "undefined symbol: __nvJitLink" in real.stderr
    facts = cuda_facts(gpus=[gpu()])
    facts.cuda.libs = libs
    o = only("cuda-libs-shadowed", facts)
    assert o.status is Status.AFFECTED and "torch's own libnvJitLink.so.12" in o.reason
    assert "pip install -U --force-reinstall nvidia-nvjitlink-cu12" in [
        w.command for w in issue("cuda-libs-shadowed").workarounds]


@pytest.mark.envs
@pytest.mark.parametrize("env,cond,count", [
    ("xla-2.5.1", None, 0), ("xla-2.6.0", "wheel cudart", 2), (None, "cudart", 16),
])
def test_torch_preloading_read_from_its_init(env, cond, count):
    text = (torch_dir(env) / "__init__.py").read_text()
    calls, got = cuda_libs.torch_preloads(text)
    assert got == cond and len(calls) == count


def test_live_maps_are_the_truth():
    facts = cuda_facts(gpus=[gpu()])
    facts.cuda.libs = [lib()]
    system = "/usr/local/cuda/lib64/libnvJitLink.so.12.1.105"
    gpu_catalog.merge_live(facts, {"import_ok": True, "loaded": [system]})
    o = only("cuda-libs-shadowed", facts)
    assert o.status is Status.AFFECTED and "the live torch mapped" in o.reason


# --- cuda-toolkit-missing ----------------------------------------------------------------------


def _path_without_nvcc(tmp_path: Path) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    return str(bindir)


def test_toolkit_found_as_torch_finds_it(tmp_path):
    no_nvcc = _path_without_nvcc(tmp_path)
    home = cuda_toolkit.toolkit_info({"CUDA_HOME": str(tmp_path / "nope"), "PATH": no_nvcc})
    assert (home.cuda_home, home.source, home.cuda_home_exists, home.nvcc) == (
        str(tmp_path / "nope"), "CUDA_HOME", False, None)
    via_path = cuda_toolkit.toolkit_info({"CUDA_PATH": "/usr/local/cuda", "PATH": no_nvcc})
    assert via_path.source == "CUDA_PATH"
    if not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("no CUDA toolkit in /usr/local/cuda here")
    default = cuda_toolkit.toolkit_info({"PATH": no_nvcc})
    assert default.cuda_home == "/usr/local/cuda" and default.source == "/usr/local/cuda"
    assert default.nvcc == "/usr/local/cuda/bin/nvcc" and default.nvcc_version
    assert default.cuda_runtime_h == "/usr/local/cuda/include/cuda_runtime.h"


@pytest.mark.envs
@pytest.mark.parametrize("state", ["PATH", "no nvcc on PATH", "CUDA_HOME=/nonexistent"])
def test_toolkit_agrees_with_torchs_own_cuda_home(tmp_path, state):
    """`torch.utils.cpp_extension.CUDA_HOME` in the same environment, from a CUDA torch."""
    python = venv_python("xla-2.6.0")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    if state != "PATH":
        env["PATH"] = _path_without_nvcc(tmp_path)
    if state.startswith("CUDA_HOME"):
        env["CUDA_HOME"] = "/nonexistent"
    said = subprocess.run([python, "-c", "from torch.utils.cpp_extension import CUDA_HOME; print(CUDA_HOME)"],
                          capture_output=True, text=True, timeout=300, env=env, cwd="/")
    assert said.stdout.strip().splitlines()[-1] == str(cuda_toolkit.toolkit_info(env).cuda_home)


def test_toolkit_hidden_for_real_in_a_mount_namespace(tmp_path):
    """/usr/local hidden (and no nvcc on PATH): torch's search finds nothing, nor does the probe's."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    code = ("import json; from inductor_doctor.probe.cuda_toolkit import toolkit_info; "
            "print(json.dumps(toolkit_info({'PATH': '/usr/bin:/bin'}).__dict__))")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    hide = 'mount -t tmpfs tmpfs /usr/local && exec "$@"'
    proc = subprocess.run(["unshare", "--mount", "sh", "-c", hide, "sh", sys.executable, "-c", code],
                          capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs here: {proc.stderr.strip()[-200:]}")
    got = json.loads(proc.stdout)
    assert got["cuda_home"] is None and got["nvcc"] is None
    facts = cuda_facts()
    facts.toolkit = CudaToolkitInfo(**got)
    o = only("cuda-toolkit-missing", facts)
    assert o.status is Status.AFFECTED and "CUDA_HOME environment variable is not set" in o.reason


def test_toolkit_verdicts():
    facts = cuda_facts("2.11.0+cu130", "13.0")
    facts.toolkit = CudaToolkitInfo(cuda_home="/usr/local/cuda", source="/usr/local/cuda",
                                    cuda_home_exists=True,
                                    nvcc="/usr/local/cuda/bin/nvcc", nvcc_version="13.0",
                                    cuda_runtime_h="/usr/local/cuda/include/cuda_runtime.h")
    assert only("cuda-toolkit-missing", facts).status is Status.OK
    facts.torch.cuda = "12.4"
    o = only("cuda-toolkit-missing", facts)
    assert o.status is Status.AFFECTED and "mismatches the version" in o.reason
    facts.toolkit.cuda_runtime_h = None
    assert "cuda_runtime.h" in only("cuda-toolkit-missing", facts).reason
    facts.toolkit.nvcc = None
    assert "no bin/nvcc" in only("cuda-toolkit-missing", facts).reason
    facts.toolkit = None
    assert only("cuda-toolkit-missing", facts).status is Status.INCONCLUSIVE
    assert only("cuda-toolkit-missing", make_facts()).status is Status.NOT_APPLICABLE  # CPU torch


# --- triton-shared-memory ----------------------------------------------------------------------


def test_shared_memory_verdicts():
    tri = TritonInfo(version="3.6.0")
    gpus = [gpu(0, "Tesla T4", "7.5"), gpu(1, "NVIDIA GeForce RTX 4090", "8.9"), gpu(2, "NVIDIA A100", "8.0"),
            gpu(3), gpu(4, "mystery", "11.0")]
    got = by_device("triton-shared-memory", cuda_facts("2.9.0", "12.8", gpus=gpus, triton=tri))
    assert got["cuda:0"].status is Status.LIKELY and "65536" in got["cuda:0"].reason
    assert got["cuda:1"].status is Status.LIKELY and "101376" in got["cuda:1"].reason
    assert got["cuda:2"].status is Status.OK and got["cuda:3"].status is Status.OK
    assert got["cuda:4"].status is Status.INCONCLUSIVE
    live_known = cuda_facts("2.11.0", "13.0", gpus=[gpu(0, "mystery", "11.0")], triton=tri)
    gpu_catalog.merge_live(live_known, {"import_ok": True, "device_count": 1,
                                        "gpu_extra": [{"index": 0, "smem_optin": 101376}]})
    assert only("triton-shared-memory", live_known).status is Status.LIKELY
    h100 = cuda_facts("2.11.0", "13.0", gpus=[gpu()], triton=tri)
    gpu_catalog.merge_live(h100, {"import_ok": True, "device_count": 1, "gpu_extra": [
        {"index": 0, "smem_optin": H100_HOST["torch"]["shared_memory_per_block_optin"]}]})
    o = only("triton-shared-memory", h100)
    assert o.status is Status.OK and "232448" in o.reason and "live probe" in o.reason
    assert only("triton-shared-memory", make_facts(gpus=gpus)).status is Status.NOT_APPLICABLE


# --- the live probe and the report ---------------------------------------------------------------


def test_live_answer_of_the_h100_host_merges():
    facts = cuda_facts("2.11.0+cu130", "13.0", gpus=parse_gpu_csv(H100_HOST["nvidia_smi_query"]), arch=None,
                       driver="580.159.04", driver_cuda="13.0")
    facts.cuda.libs = [CudaLibInfo(soname="libcudart.so.13", wheel=p, resolved=p)
                       for p in H100_HOST["mapped_after_import"] if p.endswith("libcudart.so.13")]
    live.merge(facts, {"stage": "done", "import_ok": True, "torch_version": "2.11.0+cu130",
                       "cuda_version": "13.0", "cuda_available": True,
                       "arch_list": H100_HOST["torch"]["get_arch_list"], "device_count": 1,
                       "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "sm": "9.0",
                                    "memory_mib": 81004, "sm_count": 132}],
                       "gpu_extra": [{"index": 0, "smem_optin": 232448}],
                       "loaded": H100_HOST["mapped_after_import"]})
    assert facts.torch.cuda_arch_list == H100_HOST["torch"]["get_arch_list"]
    assert facts.torch.cuda_arch_source == "live probe"
    assert facts.cuda.torch_device_count == 1 and facts.cuda.driver_sufficient is True
    assert facts.gpus[0].smem_per_block_optin == 232448 and facts.gpus[0].sm_count == 132
    assert facts.cuda.libs[0].loaded and facts.cuda.libs[0].loaded.endswith("nvidia/cu13/lib/libcudart.so.13")
    for id_ in GPU_CATALOG:
        for o in outcomes(id_, facts):
            assert o.status not in (Status.AFFECTED, Status.LIKELY), (id_, o.reason)


def test_live_torch_seeing_no_gpu_removes_the_rows():
    facts = cuda_facts(gpus=driver_host(2))
    gpu_catalog.merge_live(facts, {"import_ok": True, "cuda_version": "12.4", "device_count": 0})
    assert facts.gpus == [] and len(facts.cuda.driver_gpus) == 2
    assert "the live torch reports none" in only("gpu-too-old-for-triton", facts).reason


def test_a_valid_visible_list_is_not_blamed_when_the_live_torch_sees_none():
    facts = cuda_facts(gpus=driver_host(2), env={"CUDA_VISIBLE_DEVICES": "0"}, driver="470.82.01",
                       driver_cuda="11.4")
    gpu_catalog.merge_live(facts, {"import_ok": True, "cuda_version": "12.4", "device_count": 0,
                                   "cuda_init_warning": "CUDA initialization: The NVIDIA driver on your "
                                   "system is too old (found version 11040)."})
    assert facts.gpus == []
    assert only("cuda-devices-hidden", facts).status is Status.INCONCLUSIVE
    assert only("cuda-driver-too-old", facts).status is Status.AFFECTED


def test_probe_text_shows_the_toolkit_and_hidden_gpus():
    facts = cuda_facts(gpus=driver_host(4), env={"CUDA_VISIBLE_DEVICES": "7"})
    facts.toolkit = CudaToolkitInfo(cuda_home=None)
    text = probe_to_text(facts, color=False)
    assert "CUDA toolkit (AOTInductor, extensions)" in text and "none (no CUDA_HOME, CUDA_PATH" in text
    assert "none visible to torch (the driver lists 4)" in text
    assert "'7': torch sees 0 of the driver's 4" in text
    assert "GPU archs   sm_50 sm_60" in text
