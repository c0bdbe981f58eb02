"""The two CUDA seed checks on a real GPU: `pytest -m gpu tests/known_issues/test_on_gpu_canary_issues.py`.

Written for torch 2.11 / Triton 3.6 on an H100 and skipped where there is no GPU. They need the
interpreter running pytest to have a CUDA torch and triton (the canaries run with it).

* Through the CLI: each GPU gets a canary verdict (`ok` on a fixed torch), not the static one.
* Sensitivity: the canaries, run as the engine runs them, must say `affected` when the fix is
  patched out of the installed torch (a `sitecustomize` on the canary's PYTHONPATH):
  - triton-constexpr-dynamic: `specialize_symbolic` made a no-op, so a SymInt reaches the
    tl.constexpr argument again, as in torch <= 2.5;
  - view-dtype-align: the pre-pytorch#151859 `is_unaligned()` (a ReinterpretView's offset ignored).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import has_cuda, run_json

from inductor_doctor.check.engine import classify
from inductor_doctor.check.runner import CanaryJob, ProcessGroups, run_one
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry
from inductor_doctor.schemas import validate
from inductor_doctor.target import canary_path

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not has_cuda(), reason="no NVIDIA GPU here")]

CUDA_SEEDS = ("triton-constexpr-dynamic", "view-dtype-align")

NO_CONSTEXPR_SPECIALIZATION = '''\
"""Test-only: undo pytorch#136512, so tl.constexpr arguments stay symbolic under dynamic shapes."""
import importlib

patched = []
for module, cls in (("torch._dynamo.variables.functions", "TritonKernelVariable"),
                    ("torch._higher_order_ops.triton_kernel_wrap", "TracingTritonHOPifier"),
                    ("torch._higher_order_ops.triton_kernel_wrap", "TraceableTritonKernelWrapper")):
    klass = getattr(importlib.import_module(module), cls, None)
    if klass is not None and "specialize_symbolic" in vars(klass):
        klass.specialize_symbolic = lambda self, arg: arg
        patched.append(cls)
assert "TritonKernelVariable" in patched, patched
'''

PRE_FIX_IS_UNALIGNED = '''\
"""Test-only: is_unaligned() as in torch 2.8.0 nightlies 2025-04-08..22 (view offset ignored)."""
import torch._inductor.ir as ir


def is_unaligned(node):
    if isinstance(node, (ir.TensorBox, ir.StorageBox)):
        return is_unaligned(node.data)
    if isinstance(node, ir.ReinterpretView):
        return is_unaligned(node.data)
    if isinstance(node, ir.Buffer):
        return node.get_name() in ir.V.graph.unaligned_buffers
    return False


ir.is_unaligned = is_unaligned
'''


@pytest.fixture(scope="module", autouse=True)
def cuda_torch() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import torch, triton; print(torch.cuda.is_available())"],
        capture_output=True, text=True, timeout=300,
    )
    if probe.stdout.strip() != "True":
        pytest.skip(f"{sys.executable} has no CUDA torch + triton: {probe.stderr.strip()[-300:]}")


def with_sitecustomize(tmp_path: Path, source: str) -> Dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(source)
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def run_canary(issue_id: str, device: str, env: Dict[str, str]):
    issue = registry().find(issue_id)
    assert issue is not None and issue.canary is not None
    job = CanaryJob(key=f"{issue_id}@{device}", script=canary_path(issue.canary.script), device=device,
                    python=sys.executable, timeout_s=600, needs=issue.canary.needs,
                    env={**issue.canary.env, **env},
                    affected_signals=tuple(issue.canary.affected_exit_signals))
    run = run_one(job, ProcessGroups())
    return run, classify(issue, run)


def cuda_rows(data: dict, issue_id: str) -> List[dict]:
    return [r for r in data["results"] if r["id"] == issue_id]


def test_cli_runs_the_cuda_canaries_on_every_gpu():
    data = run_json(["check", "--only", ",".join(CUDA_SEEDS), "--no-cache"], timeout=1200)
    validate("check", data)
    gpus = data["environment"]["cuda"]["gpus"]
    assert gpus, "the probe sees the GPU"
    for issue_id in CUDA_SEEDS:
        rows = cuda_rows(data, issue_id)
        assert [r["device"] for r in rows] == [f"cuda:{g['index']}" for g in gpus]
        for r in rows:
            assert (r["status"], r["basis"]) == ("ok", "canary"), r
            assert r["reason"].startswith("canary ran clean (torch "), r["reason"]
    assert "triton" in cuda_rows(data, "triton-constexpr-dynamic")[0]["reason"]


def test_static_check_on_a_gpu_machine_reports_each_gpu():
    data = run_json(["check", "--static", "--only", ",".join(CUDA_SEEDS), "--no-cache"])
    for issue_id in CUDA_SEEDS:
        rows = cuda_rows(data, issue_id)
        assert rows and all(r["device"].startswith("cuda:") for r in rows)
        assert all((r["status"], r["basis"]) == ("ok", "static") for r in rows), rows


def test_triton_canary_flags_a_torch_without_constexpr_specialization(tmp_path):
    env = with_sitecustomize(tmp_path, NO_CONSTEXPR_SPECIALIZATION)
    run, (status, reason, evidence) = run_canary("triton-constexpr-dynamic", "cuda:0", env)
    assert status is Status.AFFECTED, (reason, evidence, run.stderr[-3000:])
    assert "NameError" in reason


def test_triton_canary_is_clean_unpatched():
    run, (status, reason, _) = run_canary("triton-constexpr-dynamic", "cuda:0", {})
    assert status is Status.OK, (reason, run.stderr[-3000:])


def test_view_align_canary_flags_the_pre_fix_logic_on_cuda(tmp_path):
    env = with_sitecustomize(tmp_path, PRE_FIX_IS_UNALIGNED)
    run, (status, reason, evidence) = run_canary("view-dtype-align", "cuda:0", env)
    assert status is Status.AFFECTED, (reason, evidence, run.stderr[-3000:])
    assert "bytes aligned" in reason
    # The re-run with the asserts off is reported either way. Upstream it ran clean on the affected
    # nightlies; on torch 2.11 + Triton 3.6 with only is_unaligned() reverted, the same wrong
    # alignment also reaches Triton's pointer hints and the kernel faults ("CUDA error: misaligned
    # address"), which the canary must name rather than CUDA's TORCH_USE_CUDA_DSA boilerplate.
    workaround = r"with TORCHINDUCTOR_ALIGNMENT_ASSERTS=0: (clean|still fails: (?!Compile with)\S)"
    assert re.search(workaround, reason), reason


def test_view_align_canary_is_clean_unpatched():
    run, (status, reason, _) = run_canary("view-dtype-align", "cuda:0", {})
    assert status is Status.OK, (reason, run.stderr[-3000:])
