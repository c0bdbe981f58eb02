"""An `ok` is earned: a canary proves the path under test ran, and settings that make a compile
hollow are set aside for it and reported as a finding of their own (compile-bypassed).

Each state is made for real with torch 2.13 here: TORCH_COMPILE_DISABLE=1 in the environment; the
same with no C++ compiler at all; a sitecustomize that sets torch._dynamo.config.suppress_errors;
a canary whose compile runs on the eager backend (nothing compiled); `torch.compile` replaced at
start-up. Before this, the first three said block-mask-cpu `ok` "canary ran clean" and nothing named
the setting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from inductor_doctor.check.classify import canary_outcome
from inductor_doctor.check.runner import CanaryJob, ProcessGroups
from inductor_doctor.check.verdict import decide
from inductor_doctor.core.model import Canary, DeviceKind, KnownIssue, Severity, Status

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from fault_canaries.doctor import run_doctor  # noqa: E402

needs_torch = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0,
    reason="needs torch")


def check(tmp_path: Path, only: str, **env: str) -> Dict[str, Any]:
    extra = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache"), **env}
    proc = run_doctor(["check", "--only", only, "--no-cache", "--format", "json", "--fail-on", "never"],
                      env=extra, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def row(report: Dict[str, Any], issue: str, device: str) -> Dict[str, Any]:
    [found] = [r for r in report["results"] if r["id"] == issue and r["device"] == device]
    return found


# --- the harness's proof, one canary at a time ------------------------------------------------------


def _issue(script: Path) -> KnownIssue:
    return KnownIssue(id="proof-probe", title="t", severity=Severity.ERROR, devices=(DeviceKind.CPU,),
                      upstream=(), summary="s", canary=Canary(str(script), devices=(DeviceKind.CPU,)))


def _run(script: Path, env: Dict[str, str] = None):  # type: ignore[assignment]
    job = CanaryJob(key="proof@cpu", script=script, device="cpu", python=sys.executable, timeout_s=300)
    base = {**os.environ, **(env or {})}
    from inductor_doctor.check import runner

    run = runner.run_one(job, ProcessGroups(), base_env=base)
    return run, canary_outcome(_issue(script), run)


@needs_torch
def test_a_compile_on_the_eager_backend_is_no_ok(tmp_path: Path):
    """Dynamo captured the graph, the eager backend ran it: nothing compiled, so nothing is `ok`."""
    script = tmp_path / "eager_canary.py"
    script.write_text("import torch\n"
                      "f = torch.compile(lambda x: x.sin() + 1, backend='eager')\n"
                      "assert torch.allclose(f(torch.ones(4)), torch.ones(4).sin() + 1)\n")
    run, outcome = _run(script)
    assert run.result["status"] == "ok" and run.result["proof"]["graphs"] == 1, run.result
    assert outcome.proof is None
    verdict = decide(None, True, outcome)
    assert verdict.status is Status.INCONCLUSIVE
    assert verdict.reason.startswith("the canary ran, but nothing was compiled on cpu: "
                                     "Dynamo captured 1 graph; no C++ kernel was loaded"), verdict.reason


@needs_torch
def test_torch_compile_replaced_at_start_up_is_named(tmp_path: Path):
    """A sitecustomize that makes torch.compile the identity: no graph, and the reason names it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import torch\ntorch.compile = lambda fn=None, **kw: fn\n")
    script = tmp_path / "canary.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n")
    run, outcome = _run(script, {"PYTHONPATH": str(site)})
    verdict = decide(None, True, outcome)
    assert verdict.status is Status.INCONCLUSIVE, verdict.reason
    assert "nothing was compiled" in verdict.reason
    assert "torch.compile replaced by sitecustomize.<lambda>" in verdict.reason, verdict.reason


def test_a_canary_declares_what_the_harness_cannot_see(tmp_path: Path):
    script = tmp_path / "declares.py"
    script.write_text("from indoc_harness import exercised\n"
                      "exercised('ran in a child interpreter')\n")
    run, outcome = _run(script)
    assert run.result["proof"]["declared"] == ["ran in a child interpreter"]
    assert decide(None, True, outcome).status is Status.OK
    assert outcome.proof == "ran in a child interpreter on cpu"


def test_the_harness_sets_aside_a_setting_made_at_start_up(tmp_path: Path):
    """A sitecustomize that exports TORCHDYNAMO_DISABLE in the canary's own process (where the doctor's
    environment cannot see it): the harness removes it and says so."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['TORCHDYNAMO_DISABLE'] = '1'\n")
    script = tmp_path / "canary.py"
    script.write_text("import os\nassert 'TORCHDYNAMO_DISABLE' not in os.environ\n")
    run, outcome = _run(script, {"PYTHONPATH": str(site)})
    assert run.result["set_aside"] == ["TORCHDYNAMO_DISABLE=1"], run.result
    assert any("set aside for the canary" in e and "TORCHDYNAMO_DISABLE=1" in e for e in outcome.evidence)


# --- whole checks, the states of issue 25 -------------------------------------------------------------


@pytest.mark.heavy
@needs_torch
def test_compile_disabled_in_the_environment(tmp_path: Path):
    """TORCH_COMPILE_DISABLE=1: the finding names it; block-mask-cpu runs with it set aside and its
    `ok` carries the proof (before: `ok` "canary ran clean" from a run that compiled nothing)."""
    report = check(tmp_path, "block-mask-cpu,compile-bypassed", TORCH_COMPILE_DISABLE="1")
    found = row(report, "compile-bypassed", "toolchain")
    assert found["status"] == "affected" and found["severity"] == "warning"
    assert found["reason"].startswith("TORCH_COMPILE_DISABLE=1 (environment): torch.compile returns the "
                                      "function unchanged"), found["reason"]
    assert "torch/_dynamo/config.py" in found["reason"]
    assert found["reason"] in report["meta"]["notices"]  # said first, before the matrix
    canary = row(report, "block-mask-cpu", "cpu")
    assert canary["status"] == "ok", canary
    assert "Dynamo captured 1 graph" in canary["reason"]
    assert "C++ kernels compiled and loaded" in canary["reason"]
    assert "set aside for the canary: TORCH_COMPILE_DISABLE=1" in canary["reason"]


@needs_torch
def test_compile_disabled_and_no_compiler(tmp_path: Path):
    """The same, with a CXX that does not exist: every CPU compile fails, and the canary says so
    (before: `ok` "canary ran clean", nothing naming the setting)."""
    report = check(tmp_path, "block-mask-cpu,compile-bypassed", TORCH_COMPILE_DISABLE="1",
                   CXX=str(tmp_path / "no-such-g++"))
    assert row(report, "compile-bypassed", "toolchain")["status"] == "affected"
    canary = row(report, "block-mask-cpu", "cpu")
    assert canary["status"] == "inconclusive", canary
    assert "no-such-g++" in canary["reason"] or "compiler" in canary["reason"].lower(), canary["reason"]
    assert any("TORCH_COMPILE_DISABLE=1" in e for e in canary["evidence"]), canary["evidence"]


@pytest.mark.heavy
@needs_torch
def test_suppress_errors_from_a_sitecustomize(tmp_path: Path):
    """A sitecustomize sets torch._dynamo.config.suppress_errors, and there is no C++ compiler: the
    compile fails and was swallowed into eager (before: `ok` "canary ran clean"). Now the finding
    names the file and line, and the canary ran with it set aside, so its failure shows."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import torch._dynamo\n"
                                           "torch._dynamo.config.suppress_errors = True\n")
    report = check(tmp_path, "block-mask-cpu,compile-bypassed", PYTHONPATH=os.pathsep.join(
        [str(site), str(REPO)]), CXX=str(tmp_path / "no-such-g++"))
    found = row(report, "compile-bypassed", "toolchain")
    assert found["status"] == "affected", found
    assert f"torch._dynamo.config.suppress_errors = True ({site / 'sitecustomize.py'}:2)" in found["reason"]
    canary = row(report, "block-mask-cpu", "cpu")
    assert canary["status"] == "inconclusive", canary
    assert any("torch._dynamo.config.suppress_errors=True (set at start-up)" in e for e in canary["evidence"])


def test_a_value_means_what_the_release_says(tmp_path: Path):
    """TORCH_COMPILE_DISABLE=0: harmless where torch reads `== "1"` (2.9 and later), a disable where it
    reads `os.environ.get(..., False)` (2.5, 2.6). Read from the file, not remembered."""
    from inductor_doctor.core.envvars import BYPASSES
    from inductor_doctor.probe.compile_settings import takes_effect

    disable = next(b for b in BYPASSES if b.name == "TORCH_COMPILE_DISABLE")
    for body, zero_disables in (('disable = os.environ.get("TORCH_COMPILE_DISABLE", False)\n', True),
                                ('disable = os.environ.get("TORCH_COMPILE_DISABLE", "0") == "1"\n', False)):
        torch_dir = tmp_path / str(zero_disables)
        (torch_dir / "_dynamo").mkdir(parents=True)
        (torch_dir / "_dynamo" / "config.py").write_text("import os\n" + body)
        on, how = takes_effect(str(torch_dir), disable, "0")
        assert on is zero_disables and "torch/_dynamo/config.py:2" in how
    assert takes_effect(str(tmp_path / "none"), disable, "1") is None


# --- a nearly full GPU ----------------------------------------------------------------------------------


def _fake_smi(tmp_path: Path, free_mib: int) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"""#!/bin/sh
case "$*" in
  *--query-gpu*) echo "0, NVIDIA H100 80GB HBM3, 9.0, 81559, GPU-1111, {free_mib}, {81559 - free_mib}" ;;
  *) echo "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |" ;;
esac
""")
    smi.chmod(0o755)
    return bin_dir


def test_the_probe_reads_free_gpu_memory_and_the_headline_says_it_once(tmp_path: Path):
    from inductor_doctor.check.engine import nearly_full_gpus
    from inductor_doctor.core.facts import Facts, PythonInfo
    from inductor_doctor.probe.cuda import driver_info

    bin_dir = _fake_smi(tmp_path, 1024)
    info = driver_info({"PATH": f"{bin_dir}:/usr/bin:/bin"})
    [gpu] = info.gpus
    assert (gpu.memory_free_mib, gpu.memory_used_mib) == (1024, 81559 - 1024)
    facts = Facts(python=PythonInfo(executable=sys.executable, version="3"), cuda=info)
    [(device, said)] = nearly_full_gpus(facts)
    assert device == "cuda:0"
    assert said.startswith("cuda:0 (NVIDIA H100 80GB HBM3) is nearly full: 1.0 GiB free of 79.6 GiB")
    info.gpus[0].memory_free_mib = 60000
    assert nearly_full_gpus(facts) == []


def test_canaries_of_a_nearly_full_gpu_run_one_at_a_time(tmp_path: Path):
    """Four canaries on a crowded cuda:0 (and one on the toolchain, which compiles there too) with
    four jobs: none overlaps; a free GPU's run side by side."""
    record = tmp_path / "rec"
    record.mkdir()
    script = tmp_path / "sleep.py"
    script.write_text("import json, os, sys, time\nstart = time.time()\ntime.sleep(0.6)\n"
                      "open(os.path.join(os.environ['REC'], os.environ['NAME']), 'w').write("
                      "json.dumps([start, time.time()]))\n")

    def jobs(device: str, crowded: bool, n: int):
        return [CanaryJob(key=f"{device}-{i}", script=script, device=device, python=sys.executable,
                          timeout_s=60, needs=(), env={"REC": str(record), "NAME": f"{device}-{i}"},
                          one_at_a_time="cuda:0" if crowded else None) for i in range(n)]

    from inductor_doctor.check.runner import run_all

    def spans(prefix: str):
        names = [n for n in os.listdir(record) if n.startswith(prefix)]
        return sorted(json.loads((record / n).read_text()) for n in names)

    run_all(jobs("cuda:0", True, 3) + jobs("toolchain", True, 1), parallel=4)
    crowded = spans("cuda:0") + spans("toolchain")
    crowded.sort()
    assert all(a[1] <= b[0] for a, b in zip(crowded, crowded[1:])), crowded
    run_all(jobs("cuda:1", False, 3), parallel=3)
    free = spans("cuda:1")
    assert any(a[1] > b[0] for a, b in zip(free, free[1:])), free  # they overlapped


def test_a_crowded_device_is_planned_one_at_a_time():
    from inductor_doctor.check.engine import Cell, CheckOptions, _attach_canary
    from inductor_doctor.core.model import Canary as C

    issue = KnownIssue(id="x", title="t", severity=Severity.ERROR, devices=(DeviceKind.CUDA,),
                       upstream=(), summary="s",
                       canary=C("x.py", devices=(DeviceKind.CUDA, DeviceKind.TOOLCHAIN)))
    options = CheckOptions(python=sys.executable, crowded=("cuda:0",))
    for device, expected in (("cuda:0", "cuda:0"), ("cuda:1", None), ("toolchain", "cuda:0")):
        cell = Cell(issue, device, True, None)
        _attach_canary(cell, options)
        if cell.job is not None:
            assert cell.job.one_at_a_time == expected, device


def test_run_one_reports_no_proof_for_a_harness_that_gave_none(tmp_path: Path):
    """A result without proof (an older harness's record) is never an `ok`."""
    from inductor_doctor.check.runner import CanaryRun

    job = CanaryJob(key="k", script=tmp_path / "x.py", device="cpu", python=sys.executable, timeout_s=5)
    run = CanaryRun(job, 0, False, False, 0.1, "", "", {"status": "ok"})
    outcome = canary_outcome(_issue(tmp_path / "x.py"), run)
    assert decide(None, True, outcome).status is Status.INCONCLUSIVE


def test_a_start_up_file_is_likely_without_the_live_probe(tmp_path: Path):
    """`check --static` has no live probe: a sitecustomize line that names a setting is `likely`,
    with the line; with the live probe it is decided (test_suppress_errors_from_a_sitecustomize)."""
    from inductor_doctor.core.facts import Facts, PythonInfo, TorchInfo
    from inductor_doctor.kb.compile_bypassed import rule
    from inductor_doctor.probe import compile_settings

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import torch._dynamo\n# a comment: suppress_errors\n"
                                           "torch._dynamo.config.suppress_errors = True\n")
    info = compile_settings.gather(str(tmp_path / "torch"), {},
                                   {"sys_path": [str(site)], "site_packages": []})
    assert [(ln.line, ln.text) for ln in info.startup] == [(3, "torch._dynamo.config.suppress_errors = True")]
    facts = Facts(python=PythonInfo(executable=sys.executable, version="3"),
                  torch=TorchInfo(version="2.13.0", path=str(tmp_path / "torch")), compile_settings=info)
    [outcome] = rule(facts)
    assert outcome.status is Status.LIKELY and "sitecustomize.py:3" in outcome.reason
    facts.live = {"compile_settings": {"env": {}, "config": {}}}
    assert rule(facts)[0].status is Status.OK
