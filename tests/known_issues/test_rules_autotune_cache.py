"""triton-shared-memory, extended: an autotune cache written on another GPU.

The Triton cache is real: tests/data/xtarget/triton-cache-3.9.0-sm_90/ holds the metadata Triton 3.9.0
wrote beside a kernel it compiled for sm_90 (the cross-target canary's A100-tuned tile: 163840 bytes of
shared memory per block there), as a home directory shared with an H100 host would. The autotune table
beside it is DeepSpeed's layout (`<TRITON_CACHE_DIR or ~/.triton/autotune>/<Class>_2d_kernel.pickle`):
the doctor reads its name, never its contents. The probe reads both for real; the rule judges them for
each GPU.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from inductor_doctor.core.facts import CacheInfo, Facts, GPUInfo, PythonInfo, TorchInfo, TritonInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.probe.caches import gather_caches, scan_autotune

H100_CACHE = Path(__file__).resolve().parents[1] / "data" / "xtarget" / "triton-cache-3.9.0-sm_90"


def home_with(tmp_path: Path, table: bool) -> dict:
    """A home directory as a host of another GPU left it: Triton's cache, and DeepSpeed's table if asked."""
    shutil.copytree(H100_CACHE, tmp_path / ".triton" / "cache")
    if table:
        (tmp_path / ".triton" / "autotune").mkdir()
        (tmp_path / ".triton" / "autotune" / "Fp16Matmul_2d_kernel.pickle").write_bytes(b"\x80\x04}\x94.")
    return {"HOME": str(tmp_path)}


def facts(env: dict, gpu: GPUInfo) -> Facts:
    f = Facts(python=PythonInfo(executable="/usr/bin/python3", version="3.11.7", platform="linux"),
              torch=TorchInfo(version="2.13.0+cu128", cuda="12.8"), triton=TritonInfo(version="3.9.0"),
              caches=gather_caches(env))
    f.cuda.gpus = [gpu]
    return f


def verdict(f: Facts):
    issue = registry().find("triton-shared-memory")
    assert issue is not None and issue.rule is not None
    (out,) = issue.rule(f)
    return out


RTX4090 = GPUInfo(index=0, name="NVIDIA GeForce RTX 4090", sm="8.9")
A100 = GPUInfo(index=0, name="NVIDIA A100-SXM4-80GB", sm="8.0")
H100 = GPUInfo(index=0, name="NVIDIA H100 80GB HBM3", sm="9.0")


def test_the_probe_reads_what_triton_and_deepspeed_left(tmp_path):
    env = home_with(tmp_path, table=True)
    found = scan_autotune(env)
    assert found.kernels == {"cuda 90": 163840} and found.complete
    assert [Path(t).name for t in found.tables] == ["Fp16Matmul_2d_kernel.pickle"]
    # TRITON_CACHE_DIR moves both: Triton's kernels and DeepSpeed's tables
    moved = scan_autotune({"HOME": "/nonexistent", "TRITON_CACHE_DIR": str(tmp_path / ".triton" / "cache")})
    assert moved.kernels == {"cuda 90": 163840} and moved.tables == []


def test_an_h100s_table_replayed_on_an_rtx_4090_or_an_a100(tmp_path):
    env = home_with(tmp_path, table=True)
    small = verdict(facts(env, RTX4090))
    assert small.status is Status.LIKELY
    assert "an autotune cache written on another GPU" in small.reason and "sm_90" in small.reason
    assert "163840" in small.reason and "Fp16Matmul_2d_kernel.pickle" in small.reason
    # 163840 bytes fit an A100's 166912: that table replays there without failing
    a100 = verdict(facts(env, A100))
    assert a100.status is Status.OK, a100.reason
    # on the GPU that wrote it, nothing is foreign
    h100 = verdict(facts(env, H100))
    assert h100.status is Status.OK and "another GPU" not in h100.reason


def test_without_a_table_not_keyed_by_the_gpu_triton_never_replays_another_gpus_kernels(tmp_path):
    env = home_with(tmp_path, table=False)
    a = verdict(facts(env, RTX4090))
    assert a.status is Status.LIKELY and "another GPU" not in a.reason  # the per-GPU table's prediction alone
    f = facts(env, A100)
    f.caches = CacheInfo()  # facts from a doctor that did not look
    assert verdict(f).status is Status.OK

