"""The release facts behind the known-issue tables, held to what the releases themselves say.

Everything here reads the committed snapshot (`inductor_doctor/core/_data/releases.json`, built by
`tools/release_audit.py refresh` from every torch and Triton wheel on PyPI) and runs offline. A
few tests also use the real files the refresh downloaded (a CUDA 13 ptxas, Triton 3.9's sources)
when they are in its cache, and skip otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

import pytest
from conftest import REPO, run_cli
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from inductor_doctor.check.engine import CheckOptions, run_checks
from inductor_doctor.commands.plan import run_plan
from inductor_doctor.core import releases as _releases
from inductor_doctor.core.facts import (
    CompilerInfo,
    CudaInfo,
    Facts,
    GPUInfo,
    PythonInfo,
    TorchInfo,
    TritonInfo,
)
from inductor_doctor.core.model import Basis, Finding, Status
from inductor_doctor.kb import registry
from inductor_doctor.plan.resolve import PlanRequest, build_input
from inductor_doctor.probe import ptxas as ptxas_probe

SNAP = _releases.snapshot()
TORCH = sorted(SNAP["torch"], key=Version)
TRITON = sorted(SNAP["triton"], key=Version)
AUDIT_CACHE = Path(os.environ.get("INDUCTOR_DOCTOR_AUDIT_CACHE",
                                  Path.home() / ".cache" / "inductor-doctor-audit"))


def plan(*specs: str, **kw: Optional[str]) -> Dict[str, Finding]:
    report = run_plan(PlanRequest(specs=list(specs), **kw))
    return {f.id: f for f in report.findings}


def issue(id_: str):
    found = registry().find(id_)
    assert found is not None
    return found


def facts(torch: Optional[str] = None, triton: Optional[TritonInfo] = None, python: str = "3.12.4",
          gpus=(), cxx: Optional[CompilerInfo] = None) -> Facts:
    """A machine described by facts; torch's and Triton's files are absent unless a path is given."""
    f = Facts(python=PythonInfo(executable=sys.executable, version=python, platform="linux"),
              torch=TorchInfo(version=torch, path=None, cuda="12.8") if torch else None,
              triton=triton, cuda=CudaInfo(gpus=list(gpus)))
    if cxx is not None:
        f.cxx = cxx
    return f


def gcc(major: int) -> CompilerInfo:
    return CompilerInfo(command="g++", path="/usr/bin/g++", kind="gcc", version=f"{major}.4.0", works=True)


def rule(id_: str, f: Facts):
    return {o.device: o for o in issue(id_).rule(f)}


def cached_member(wheel_sha: str, member: str) -> Path:
    path = AUDIT_CACHE / "wheels" / wheel_sha / "files" / member
    if not path.exists():
        pytest.skip(f"{member} of that wheel is not in the release audit's cache (run "
                    "`python tools/release_audit.py refresh`)")
    return path


# --- the snapshot and the audit ---------------------------------------------------------------


def test_the_snapshot_covers_every_release_from_2_0_to_the_newest():
    for name, table in (("torch", TORCH), ("triton", TRITON)):
        listed = [v for v in SNAP["releases"][name] if Version(v) >= Version("2.0")]
        assert table == listed and table[0] == "2.0.0", name
        assert table[-1] == max(SNAP["releases"][name], key=Version)
        for version in table:
            entry = SNAP[name][version]
            assert len(entry["sha256"]) == 64 and entry["wheel"].endswith("x86_64.whl"), version
            assert entry["files"] and all(len(h) == 64 for h in entry["files"].values()), version
    for version in TRITON:
        for key in ("ptxas", "ptxas_blackwell"):
            if SNAP["triton"][version][key]:
                assert SNAP["triton"][version][key]["sha256"] in SNAP["ptxas"], (version, key)
    assert list(_releases.RELEASES["torch-xla"]) == SNAP["releases"]["torch-xla"]


def test_every_table_agrees_with_the_snapshot():
    """`tools/release_audit.py check`, as a maintainer runs it after a refresh: offline, exit 0."""
    proc = subprocess.run([sys.executable, "tools/release_audit.py", "check"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "every table agrees" in proc.stdout, proc.stdout + proc.stderr


def test_the_doctor_reads_the_real_release_files_as_the_audit_does():
    """The rules' own regexes on the real torch and Triton files (from the refresh's cache)."""
    if not (AUDIT_CACHE / "wheels").is_dir():
        pytest.skip("the release audit's download cache is empty")
    sys.path.insert(0, str(REPO / "tools"))
    try:
        from audit import check
    finally:
        sys.path.remove(str(REPO / "tools"))
    bad = check.check_readers(SNAP)
    if any("not in the download cache" in b for b in bad):
        pytest.skip("the release audit's download cache is incomplete")
    assert bad == []


def test_the_snapshot_is_read_only_when_needed():
    """`list` and `explain` build every issue without parsing the snapshot."""
    code = ("from inductor_doctor.kb import registry; "
            "from inductor_doctor.core import releases as _releases; "
            "r = registry(); "
            "[i.to_dict() for i in r]; print(_releases.snapshot.cache_info().currsize)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout.strip() == "0", proc.stderr


# --- Inductor's C++ standard and torch's header floor (compiler-too-old) -------------------------


def test_cxx20_from_torch_2_12():
    found = plan("torch==2.12.0", cxx="g++-9")["compiler-too-old"]
    assert found.status is Status.AFFECTED
    assert "c++20" in found.reason and "cpp_builder.py" in found.reason
    assert plan("torch==2.11.0", cxx="g++-9")["compiler-too-old"].status is Status.OK
    assert plan("torch==2.12.0", cxx="g++-10")["compiler-too-old"].status is Status.OK
    assert plan("torch>=2.11,<2.13", cxx="g++-9")["compiler-too-old"].status is Status.LIKELY


@pytest.mark.parametrize("version", TORCH)
def test_every_torch_release_floor(version):
    """GCC one below the release's floor is refused, the floor itself accepted."""
    entry = SNAP["torch"][version]
    need = max({"c++17": 7, "c++20": 10}[entry["cxx_std"]["std"]], entry["header_floor"]["gcc"] or 0)
    assert plan(f"torch=={version}", cxx=f"g++-{need - 1}")["compiler-too-old"].status is Status.AFFECTED
    assert plan(f"torch=={version}", cxx=f"g++-{need}")["compiler-too-old"].status is Status.OK


def test_compiler_floor_without_torch_files():
    o = rule("compiler-too-old", facts(torch="2.12.0", cxx=gcc(9)))[None]
    assert (o.status, o.basis) == (Status.AFFECTED, Basis.VERSION) and "c++20" in o.reason
    assert rule("compiler-too-old", facts(torch="2.12.0", cxx=gcc(10)))[None].status is Status.OK
    assert rule("compiler-too-old", facts(torch="2.11.0", cxx=gcc(8)))[None].status is Status.AFFECTED


# --- which Python Dynamo refuses (python-unsupported-by-dynamo) --------------------------------


@pytest.mark.parametrize("version", TORCH)
def test_every_torch_release_python_refusal(version):
    refused = SNAP["torch"][version]["dynamo_refuses"]["python"]
    major, minor = (int(x) for x in refused.split("."))
    found = plan(f"torch=={version}", python_version=refused)["python-unsupported-by-dynamo"]
    assert found.status is Status.AFFECTED and f"{refused}+" in found.reason
    below = plan(f"torch=={version}", python_version=f"{major}.{minor - 1}")["python-unsupported-by-dynamo"]
    assert below.status is Status.OK


def test_torch_2_0_refuses_3_11_in_eval_frame():
    found = plan("torch==2.0.1", python_version="3.11")["python-unsupported-by-dynamo"]
    assert found.status is Status.AFFECTED and "_dynamo/eval_frame.py" in found.reason
    assert "ships Python 3.11 wheels" in found.reason
    o = rule("python-unsupported-by-dynamo", facts(torch="2.0.1", python="3.11.9"))[None]
    assert (o.status, o.basis) == (Status.AFFECTED, Basis.VERSION)
    assert "Python 3.11+ not yet supported for torch.compile" in o.reason


def test_torch_2_10_to_2_14_refuse_3_15():
    assert plan("torch==2.11.0", python_version="3.14")["python-unsupported-by-dynamo"].status is Status.OK
    for version in ("2.10.0", "2.12.1", "2.14.1"):
        assert plan(f"torch=={version}", python_version="3.15")["python-unsupported-by-dynamo"].status \
            is Status.AFFECTED
    assert plan("torch==2.15.0", python_version="3.15")["python-unsupported-by-dynamo"].status is Status.OK


@pytest.mark.parametrize("python,torch,status", [
    ("3.13.5t", "2.7.1", Status.AFFECTED),  # 2.6 and 2.7: always
    ("3.13.5t", "2.6.0", Status.AFFECTED),
    ("3.13.5t", "2.8.0", Status.OK),  # 2.8 on: below 3.13.3
    ("3.13.2t", "2.8.0", Status.AFFECTED),
    ("3.13t", "2.9.0", Status.LIKELY),  # the patch release decides
    ("3.13.5", "2.7.1", Status.OK),
])
def test_free_threaded_gate(python, torch, status):
    assert plan(f"torch=={torch}", python_version=python)["python-unsupported-by-dynamo"].status is status


# --- const_data_ptr's enable_if (const-data-ptr-abi) -------------------------------------------


@pytest.mark.parametrize("version", TORCH)
def test_every_torch_release_const_data_ptr(version):
    enable_if = SNAP["torch"][version]["const_data_ptr"]["enable_if"]
    found = plan(f"torch=={version}", cxx="clang++-19")["const-data-ptr-abi"]
    assert found.status is (Status.AFFECTED if enable_if else Status.OK), found.reason


def test_const_data_ptr_range_is_2_3_to_2_11():
    affected = [v for v in TORCH if SNAP["torch"][v]["const_data_ptr"]["enable_if"]]
    assert (affected[0], affected[-1]) == ("2.3.0", "2.11.0")
    assert list(SpecifierSet(issue("const-data-ptr-abi").affected["torch"]).filter(TORCH)) == affected


def test_triage_keeps_a_torch_2_3_match(tmp_path):
    """A clang-19 extension on torch 2.3.1: `explain --log` ranks it first and in range."""
    log = tmp_path / "ext.log"
    log.write_text("torch==2.3.1\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
                   "ImportError: /tmp/ext.so: undefined symbol: _ZNK2at10TensorBase14const_data_ptrIlTnNSt9"
                   "enable_ifIXntsr3stdE8is_constIT_EE5valueEiE4typeELi0EEEPKS3_v\n")
    proc = run_cli(["explain", "--log", str(log), "--format", "json"])
    top = json.loads(proc.stdout)["results"][0]
    assert top["id"] == "const-data-ptr-abi" and top["version_in_range"] is True, top


# --- which ptxas Triton runs, and the driver it needs (triton-ptxas-driver) ---------------------


def h100(index: int = 0) -> GPUInfo:
    return GPUInfo(index=index, name="NVIDIA H100 80GB HBM3", sm="9.0", sm_count=132)


def bundled_ptxas_files(root: Path) -> str:
    """A Triton install whose bundled ptxas files are there but cannot be run here (empty): the
    rules then judge them by the release the snapshot read of that Triton, as for a foreign build
    (a ptxas that is not there at all is inconclusive, never judged by the snapshot)."""
    bin_dir = root / "backends" / "nvidia" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ("ptxas", "ptxas-blackwell"):
        (bin_dir / name).write_bytes(b"")
    return str(root)


def test_triton_3_9_runs_its_cuda13_ptxas_for_hopper(tmp_path):
    """Triton 3.9 (its ptxas files unreadable: the snapshot's scheme), an H100 and an A100 on driver 570."""
    tri = TritonInfo(version="3.9.0", path=bundled_ptxas_files(tmp_path))
    a100 = GPUInfo(index=1, name="NVIDIA A100-SXM4-80GB", sm="8.0", sm_count=108)
    f = facts(torch="2.15.0", triton=tri, gpus=[h100(0), a100])
    f.cuda.driver_version, f.cuda.driver_cuda_version = "570.86.15", "12.8"
    got = rule("triton-ptxas-driver", f)
    assert got["cuda:0"].status is Status.LIKELY
    assert "ptxas-blackwell" in got["cuda:0"].reason and "CUDA 13.4" in got["cuda:0"].reason
    assert ">= 580.65.06" in got["cuda:0"].reason
    assert got["cuda:1"].status is Status.OK and "CUDA 12.9" in got["cuda:1"].reason
    f.env["TRITON_PTXAS_PATH"] = str(tmp_path / "ptxas")
    (tmp_path / "ptxas").write_text("")
    o = rule("triton-ptxas-driver", f)["cuda:0"]
    assert o.status is Status.LIKELY and "TRITON_PTXAS_PATH is set but" in o.reason
    f.cuda.driver_version, f.cuda.driver_cuda_version = "580.65.06", "13.0"
    assert rule("triton-ptxas-driver", f)["cuda:0"].status is Status.OK


def test_triton_3_9_scheme_from_its_real_sources(tmp_path):
    entry = SNAP["triton"]["3.9.0"]
    compiler = cached_member(entry["sha256"], "triton/backends/nvidia/compiler.py")
    from inductor_doctor.kb._ptxas import scheme

    tri = TritonInfo(version="3.9.0", path=str(compiler.parents[2]))
    got = scheme(facts(triton=tri))
    assert got is not None and got.source == "compiler.py"
    assert (got.blackwell_from, got.blackwell_env) == (90, "TRITON_PTXAS_BLACKWELL_PATH")
    assert got.gpu_name(90) == "sm_90a"


@pytest.mark.parametrize("gpu,triton,driver,status", [
    ("sm_90", "3.9.0", "570.86.15", Status.AFFECTED),
    ("sm_90", "3.8.0", "570.86.15", Status.OK),  # 3.8 keeps CUDA 12.9 below sm_100
    ("sm_100", "3.8.0", "570.86.15", Status.AFFECTED),  # its ptxas-blackwell is CUDA 13.3
    ("sm_100", "3.6.0", "570.86.15", Status.OK),  # 12.9
    ("sm_90", "3.9.0", "580.65.06", Status.OK),
    ("sm_80", "3.2.0", "470.82.01", Status.AFFECTED),
])
def test_plan_the_driver_against_each_triton_release(gpu, triton, driver, status):
    assert plan(f"triton=={triton}", gpu=gpu, driver=driver)["triton-ptxas-driver"].status is status


# --- does this ptxas know the GPU (ptxas-unsupported-arch) --------------------------------------


def _cuda13_ptxas() -> Path:
    entry = SNAP["triton"]["3.9.0"]
    return cached_member(entry["sha256"], entry["ptxas_blackwell"]["member"])


def test_a_cuda13_ptxas_refuses_sm70_though_it_contains_the_text(tmp_path):
    binary = _cuda13_ptxas()
    assert b"sm_70" in binary.read_bytes()  # a string scan would say "knows it"
    v100 = GPUInfo(index=0, name="Tesla V100-SXM2-32GB", sm="7.0")
    f = facts(torch="2.6.0", triton=TritonInfo(version="3.2.0", path=str(tmp_path)), gpus=[v100, h100(1)])
    f.env["TRITON_PTXAS_PATH"] = str(binary)
    f.cuda.ptxas_binaries = ptxas_probe.gather(f.triton, f.env, f.gpus)  # what the probe asks of it
    got = rule("ptxas-unsupported-arch", f)
    v100_found = got["cuda:0"]
    assert (v100_found.status, v100_found.basis) == (Status.AFFECTED, Basis.STATIC), v100_found.reason
    assert "--gpu-name sm_70" in v100_found.reason
    assert got["cuda:1"].status is Status.OK  # sm_90a


def test_a_ptxas_that_cannot_run_here_is_judged_by_the_snapshot(tmp_path):
    """Not executable (say, another platform's): the audit's runs of CUDA 13.4 answer."""
    foreign = tmp_path / "ptxas"
    foreign.write_bytes(b"\0ELF...Cuda compilation tools, release 13.4, V13.4.59\0sm_70\0")
    v100 = GPUInfo(index=0, name="Tesla V100-SXM2-32GB", sm="7.0")
    f = facts(torch="2.6.0", triton=TritonInfo(version="3.2.0", path=str(tmp_path)), gpus=[v100, h100(1)])
    f.env["TRITON_PTXAS_PATH"] = str(foreign)
    f.cuda.ptxas_binaries = ptxas_probe.gather(f.triton, f.env, f.gpus)  # its release, no answers
    assert [(b.release, b.accepts) for b in f.cuda.ptxas_binaries] == [("13.4", {})]
    got = rule("ptxas-unsupported-arch", f)
    assert (got["cuda:0"].status, got["cuda:0"].basis) == (Status.LIKELY, Basis.VERSION), got["cuda:0"].reason
    assert (got["cuda:1"].status, got["cuda:1"].basis) == (Status.OK, Basis.VERSION)


def _stub(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "ptxas"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_the_ptxas_probe_never_hangs(tmp_path):
    stuck = _stub(tmp_path, "sleep 60\n")
    start = time.monotonic()
    assert ptxas_probe.accepts(str(stuck), "sm_90a", timeout_s=1) is None
    assert time.monotonic() - start < 10


def test_the_ptxas_probe_answer_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    calls = tmp_path / "calls"
    refuses = _stub(tmp_path, f"echo x >> {calls}\n"
                              "echo \"ptxas fatal   : Value '$2' is not defined for option 'gpu-name'\" >&2\n"
                              "exit 255\n")
    assert ptxas_probe.accepts(str(refuses), "sm_121a") is False
    ptxas_probe._memo.clear()
    assert ptxas_probe.accepts(str(refuses), "sm_121a") is False  # from the disk cache
    assert calls.read_text().count("x") == 1
    os.utime(refuses, ns=(time.time_ns(), time.time_ns() + 10**9))  # another binary: asked again
    ptxas_probe._memo.clear()
    assert ptxas_probe.accepts(str(refuses), "sm_121a") is False and calls.read_text().count("x") == 2


# --- the ptxas each Triton release bundles (plan) -------------------------------------------------


@pytest.mark.parametrize("gpu,triton,status,says", [
    ("sm_90", "3.9.0", Status.OK, "ptxas-blackwell (CUDA 13.4"),
    ("sm_70", "3.9.0", Status.OK, "ptxas (CUDA 12.9"),
    ("sm_120", "3.2.0", Status.AFFECTED, "refuses sm_120"),  # 3.0-3.2: `a` for sm_90 only
    ("sm_120", "3.3.1", Status.OK, "ptxas-blackwell (CUDA 12.8"),
    ("sm_121", "3.3.1", Status.AFFECTED, "refuses sm_121a"),
    ("sm_121", "3.5.1", Status.AFFECTED, "ptxas (CUDA 12.8"),
    ("sm_121", "3.6.0", Status.OK, "ptxas-blackwell (CUDA 12.9"),
    ("sm_110", "3.6.0", Status.AFFECTED, "refuses sm_110a"),
    ("sm_110", "3.7.0", Status.OK, "ptxas-blackwell (CUDA 13.1"),
    ("sm_103", "3.8.0", Status.OK, "ptxas-blackwell (CUDA 13.3"),
])
def test_plan_reads_each_triton_release_bundled_ptxas(gpu, triton, status, says):
    found = plan(f"triton=={triton}", gpu=gpu)["ptxas-unsupported-arch"]
    assert found.status is status and says in found.reason, found.reason


def _commands(found: Finding) -> str:
    return " | ".join(w.command or w.text for w in found.workarounds)


def test_plan_shows_the_override_each_triton_release_reads():
    on_33 = _commands(plan("triton==3.3.1", gpu="sm_121")["ptxas-unsupported-arch"])
    assert "env 'TRITON_PTXAS-BLACKWELL_PATH=" in on_33 and "export TRITON_PTXAS_BLACKWELL_PATH" not in on_33
    on_35 = _commands(plan("triton==3.5.1", gpu="sm_121")["ptxas-unsupported-arch"])
    assert "BLACKWELL" not in on_35.replace("no Blackwell", "") and "TRITON_PTXAS_PATH" in on_35
    on_36 = _commands(plan("triton==3.6.0", gpu="sm_110")["ptxas-unsupported-arch"])
    assert "export TRITON_PTXAS_BLACKWELL_PATH" in on_36 and "PTXAS-BLACKWELL" not in on_36
    driver = _commands(plan("triton==3.9.0", gpu="sm_90", driver="570.86.15")["triton-ptxas-driver"])
    assert "580.65.06" in driver and "export TRITON_PTXAS_BLACKWELL_PATH" in driver


def test_check_shows_only_the_workarounds_for_the_installed_triton(tmp_path):
    spark = GPUInfo(index=0, name="NVIDIA GB10", sm="12.1")
    f = facts(torch="2.7.1", triton=TritonInfo(version="3.3.1", path=bundled_ptxas_files(tmp_path)),
              gpus=[spark])
    options = CheckOptions(python=sys.executable, static=True)
    result = run_checks(f, [issue("ptxas-unsupported-arch")], options)
    (found,) = result.findings
    assert found.status is Status.LIKELY and "sm_121a" in found.reason
    shown = _commands(found)
    assert "env 'TRITON_PTXAS-BLACKWELL_PATH=" in shown and "export TRITON_PTXAS_BLACKWELL_PATH" not in shown


# --- torch's Triton pins --------------------------------------------------------------------------


def test_every_torch_release_triton_pin():
    for version in TORCH:
        assert _releases.TORCH_TRITON_PIN[version] == SNAP["torch"][version]["triton"]
    assert _releases.TORCH_TRITON_PIN["2.14.1"] == "~=3.8.0"
    inp, _, _ = build_input(PlanRequest(specs=["torch==2.14.1"]))
    triton = inp.package("triton")
    assert triton is not None and triton.candidates == ("3.8.0",)
