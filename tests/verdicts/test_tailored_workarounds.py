"""Install workarounds are the answer for this machine, not a fixed example ("cu126 shown").

The check's rule decides the finding on recorded facts (no GPU here); `plan/tailor.py` then writes
the install lines from the release snapshot and this machine's facts.
"""

from __future__ import annotations

import sys

from inductor_doctor.check.engine import _finding
from inductor_doctor.check.verdict import Decision
from inductor_doctor.core.facts import CudaInfo, CudaToolkitInfo, Facts, GPUInfo, PythonInfo, TorchInfo
from inductor_doctor.core.model import Basis, Status
from inductor_doctor.kb import registry
from inductor_doctor.plan.tailor import tailor


def finding(issue_id: str, facts: Facts):
    issue = registry().find(issue_id)
    outcome = [o for o in issue.rule(facts) if o.status in (Status.AFFECTED, Status.LIKELY)][0]
    verdict = Decision(outcome.status, Basis.STATIC, outcome.reason)
    return _finding(issue, outcome.device or "toolchain", verdict)


def commands(f) -> list:
    return [w.command for w in f.workarounds if w.command]


def test_toolkit_commands_are_for_torchs_own_cuda_13():
    facts = Facts(python=PythonInfo(executable=sys.executable, version="3.12.3", glibc="2.39"),
                  torch=TorchInfo(version="2.13.0+cu130", path=None, cuda="13.0"),
                  toolkit=CudaToolkitInfo(cuda_home=None))
    before = finding("cuda-toolkit-missing", facts)
    assert any("12.8" in c for c in commands(before)), "the fixed example this replaces"
    after = tailor([before], facts)[0]
    assert commands(after)[:2] == [
        "export CUDA_HOME=/usr/local/cuda-13.0 PATH=/usr/local/cuda-13.0/bin:$PATH",
        "pip install 'nvidia-cuda-nvcc==13.0.*' 'nvidia-cuda-runtime==13.0.*'",
    ]
    assert not any("12.8" in c or "-cu12" in c for c in commands(after))


def test_toolkit_commands_for_a_cuda_12_torch_keep_the_cu12_names():
    facts = Facts(python=PythonInfo(executable=sys.executable, version="3.12.3"),
                  torch=TorchInfo(version="2.9.1+cu126", path=None, cuda="12.6"),
                  toolkit=CudaToolkitInfo(cuda_home=None))
    after = tailor([finding("cuda-toolkit-missing", facts)], facts)[0]
    assert "pip install 'nvidia-cuda-nvcc-cu12==12.6.*' 'nvidia-cuda-runtime-cu12==12.6.*'" in commands(after)


def blackwell(torch: TorchInfo, driver: str = "575.57.08") -> Facts:
    gpu = GPUInfo(index=0, name="NVIDIA GeForce RTX 5090", sm="12.0")
    return Facts(python=PythonInfo(executable=sys.executable, version="3.12.3", glibc="2.39"),
                 torch=torch, cuda=CudaInfo(driver_version=driver, driver_cuda_version="12.9", gpus=[gpu],
                                            driver_gpus=[gpu]))


def test_a_cpu_torch_on_a_blackwell_card_gets_the_build_for_it():
    facts = blackwell(TorchInfo(version="2.13.0+cpu", path=None, cuda=None))
    before = finding("torch-cpu-only-build", facts)
    assert any("cu128" in c for c in commands(before))
    after = tailor([before], facts)[0]
    assert after.workarounds[0].command == "pip install --force-reinstall torch==2.10.0 triton==3.6.0"
    assert "torch 2.10.0 (cu128, Triton 3.6.0)" in after.workarounds[0].text
    assert not any("download.pytorch.org/whl/cu128" in c for c in commands(after))


def test_a_cu124_torch_on_a_blackwell_card_gets_a_build_with_sm120_kernels():
    archs = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    facts = blackwell(TorchInfo(version="2.6.0+cu124", path=None, cuda="12.4", cuda_arch_list=archs),
                      driver="580.95.05")
    after = tailor([finding("torch-gpu-arch-missing", facts)], facts)[0]
    assert after.workarounds[0].command == "pip install --force-reinstall torch==2.15.0 triton==3.9.0"
