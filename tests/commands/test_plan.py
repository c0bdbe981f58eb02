"""`plan` in process: reading requirements, resolving ranges over real releases, predicting.

These use a registry of stand-in issues so that they test the planner, not the knowledge base;
`test_plan_cli.py` runs the real command against the real issues.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from inductor_doctor.commands.plan import run_plan
from inductor_doctor.core.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Status,
    UsageError,
    Workaround,
)
from inductor_doctor.core.releases import RELEASES
from inductor_doctor.kb import Registry
from inductor_doctor.plan.resolve import PlanRequest, build_input, parse_compiler, parse_gpu


def _issue(
    id_: str, affected=None, fixed=None, predict=None, severity=Severity.ERROR, devices=None
) -> KnownIssue:
    return KnownIssue(
        id=id_,
        title=f"stand-in {id_}",
        severity=severity,
        devices=devices or (DeviceKind.CUDA,),
        upstream=("pytorch/pytorch#1",) if id_ == "constexpr" else (),
        summary="s",
        affected=affected or {},
        fixed=fixed or {},
        workarounds=(Workaround("upgrade", "pip install -U torch", "upgrade"),),
        predict=predict,
    )


REG = Registry(
    [
        _issue("constexpr", {"torch": "<2.6.0"}, {"torch": "2.6.0"}),
        _issue("donor", {"torch_xla": "<2.6.0"}, {"torch_xla": "2.6.0"}, devices=(DeviceKind.XLA,)),
        _issue("nightly-only", {"torch": ">=2.8.0.dev20250408,<2.8.0.dev20250423"}, {"torch": "2.8.0"}),
        _issue("skew", {"torch": "==2.6.*", "triton": ">=3.3"}),
        _issue("slow", {"torch": "<2.6.0"}, severity=Severity.WARNING),
        _issue("no-versions"),
    ]
)


def plan(*specs: str, files: List[Path] = (), **kw):
    report = run_plan(PlanRequest(specs=list(specs), requirement_files=list(files), **kw), registry=REG)
    return report, {f.id: f for f in report.findings}


def status(*specs: str, **kw):
    return {k: f.status for k, f in plan(*specs, **kw)[1].items()}


# --- predictions -------------------------------------------------------------------------------


def test_pins_in_range_are_affected_and_predicted():
    report, by_id = plan("torch==2.5.1", "torch_xla==2.5.1")
    assert by_id["constexpr"].status is Status.AFFECTED
    assert by_id["donor"].status is Status.AFFECTED
    assert report.meta["predicted"] is True
    assert {"constexpr", "donor"} <= set(report.meta["predicted_ids"])
    assert "2.5.1" in by_id["constexpr"].reason and "<2.6.0" in by_id["constexpr"].reason
    assert by_id["constexpr"].workarounds, "affected findings carry the workarounds"
    assert all(f.basis.value == "version" for f in report.findings)
    assert report.command == "plan" and report.schema == "inductor-doctor/plan/v1"


def test_fixed_pins_are_ok_and_not_predicted():
    report, by_id = plan("torch==2.6.0", "torch_xla==2.6.0")
    assert by_id["constexpr"].status is Status.OK
    assert by_id["donor"].status is Status.OK
    assert not by_id["constexpr"].workarounds


def test_ranges_are_judged_over_real_releases():
    assert status("torch>=2.4,<2.7")["constexpr"] is Status.LIKELY
    assert status("torch>=2.4,<2.6")["constexpr"] is Status.AFFECTED
    assert status("torch>=2.6")["constexpr"] is Status.OK
    assert status("torch~=2.5.0")["constexpr"] is Status.AFFECTED
    assert status("torch==2.5.*")["constexpr"] is Status.AFFECTED
    assert status("torch")["constexpr"] is Status.LIKELY  # any version: some releases hit
    assert status("torch!=2.5.1,<2.6")["constexpr"] is Status.AFFECTED


def test_likely_reason_names_the_versions_and_the_fix():
    _, by_id = plan("torch>=2.4,<2.7")
    reason = by_id["constexpr"].reason
    assert "torch>=2.4,<2.7" in reason and "2.5.1" in reason and "2.6.0" in reason
    assert "torch>=2.6.0" in reason


def test_component_not_in_the_plan_is_not_applicable():
    _, by_id = plan("torch==2.5.1")
    assert by_id["donor"].status is Status.NOT_APPLICABLE and by_id["donor"].answer == "cannot-arise"


def test_an_issue_without_versions_cannot_be_predicted_and_says_what_decides_it():
    """Not "cannot arise": the machine the stack lands on decides, and its check says it."""
    _, by_id = plan("torch==2.5.1")
    found = by_id["no-versions"]
    assert found.status is Status.INCONCLUSIVE and found.answer == "cannot-be-predicted"
    assert found.decided_by == "inductor-doctor check --only no-versions, where the stack is installed"


def test_nightly_only_bugs_never_hit_releases_but_hit_their_nightly():
    assert status("torch>=2.7")["nightly-only"] is Status.OK
    assert status("torch==2.8.0.dev20250410")["nightly-only"] is Status.AFFECTED
    assert status("torch==2.8.0.dev20250423")["nightly-only"] is Status.OK


def test_local_version_labels_are_judged_on_the_public_version():
    assert status("torch==2.5.1+cu124")["constexpr"] is Status.AFFECTED
    assert status("torch==2.6.0+cu126")["constexpr"] is Status.OK
    # A CPU-only build has no GPU: the GPU-only issue cannot arise at all.
    assert status("torch==2.5.1+cpu")["constexpr"] is Status.NOT_APPLICABLE


def test_every_condition_must_hold():
    assert status("torch==2.6.0", "triton==3.3.0")["skew"] is Status.AFFECTED
    assert status("torch==2.6.0", "triton==3.2.0")["skew"] is Status.OK
    assert status("torch==2.6.0", "triton>=3.2")["skew"] is Status.LIKELY


def test_triton_is_inferred_from_torchs_own_pin():
    inp, _, _ = build_input(PlanRequest(specs=["torch==2.6.0"]))
    triton = inp.package("triton")
    assert triton is not None and triton.candidates == ("3.2.0",)
    assert "torch==2.6.0" in (triton.inferred_from or "")
    assert status("torch==2.6.0")["skew"] is Status.OK
    assert build_input(PlanRequest(specs=["torch==2.6.0+cpu"]))[0].package("triton") is None


def test_ranges_past_the_release_table_are_judged_at_their_bounds():
    _, by_id = plan("torch>=3.0")
    assert by_id["constexpr"].status is Status.OK
    assert "bounds" in by_id["constexpr"].reason


def test_unknown_versions_are_inconclusive_never_ok():
    _, by_id = plan("git+https://github.com/pytorch/pytorch#egg=torch")
    assert by_id["constexpr"].status is Status.INCONCLUSIVE


def test_warnings_are_shown_but_do_not_fail_the_plan():
    reg = Registry([_issue("slow", {"torch": "<2.6.0"}, severity=Severity.WARNING)])
    report = run_plan(PlanRequest(specs=["torch==2.5.1"]), registry=reg)
    assert report.findings[0].status is Status.AFFECTED
    assert report.meta["predicted"] is False


def test_a_plugin_s_failing_hook_is_inconclusive_not_a_crash():
    def broken(_inp):
        raise RuntimeError("boom")

    plugin = dataclasses.replace(_issue("broken", predict=broken), source="some-plugin")
    reg = Registry([plugin, _issue("constexpr", {"torch": "<2.6.0"})])
    by_id = {f.id: f for f in run_plan(PlanRequest(specs=["torch==2.5.1"]), registry=reg).findings}
    assert by_id["broken"].status is Status.INCONCLUSIVE and "boom" in by_id["broken"].reason
    assert by_id["constexpr"].status is Status.AFFECTED


def test_a_built_in_hook_s_failure_is_the_doctor_s_own():
    """A built-in prediction that raises is a bug in the doctor: it ends the plan (exit 3 at the
    command line), never a verdict about the plan."""
    def broken(_inp):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_plan(PlanRequest(specs=["torch==2.5.1"]), registry=Registry([_issue("broken", predict=broken)]))


def test_hooks_may_return_one_outcome_per_device():
    def two(_inp):
        return [RuleOutcome(Status.OK, "a", device="cuda"), RuleOutcome(Status.LIKELY, "b", device="cpu")]

    reg = Registry([_issue("two", predict=two)])
    findings = run_plan(PlanRequest(specs=["torch==2.5.1"]), registry=reg).findings
    assert {(f.device, f.status) for f in findings} == {("cuda", Status.OK), ("cpu", Status.LIKELY)}


def test_results_are_sorted_worst_first():
    report, _ = plan("torch==2.5.1")
    ranks = [f.status.rank for f in report.findings]
    assert ranks == sorted(ranks, reverse=True)


# --- toolchain options ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, kind, version",
    [
        ("clang++-19", "clang", "19"),
        ("clang-18", "clang", "18"),
        ("clang++19", "clang", "19"),
        ("/opt/llvm/bin/clang++-20.1", "clang", "20.1"),
        ("g++-13", "gcc", "13"),
        ("gcc-12", "gcc", "12"),
        ("aarch64-linux-gnu-g++-14", "gcc", "14"),
        ("g++", "gcc", None),
        ("clang++", "clang", None),
        ("c++", None, None),
        ("cl.exe", "msvc", None),
        ("icpx", "intel", None),
        ("ccache", None, None),
    ],
)
def test_compiler_names(name, kind, version):
    c = parse_compiler(name)
    assert c is not None and (c.kind, c.version) == (kind, version)


@pytest.mark.parametrize(
    "text, sm", [("sm_90", 90), ("sm_90a", 90), ("90", 90), ("8.6", 86), ("sm_120", 120)]
)
def test_gpu_names(text, sm):
    assert parse_gpu(text) == sm


@pytest.mark.parametrize(
    "kw",
    [
        {"gpu": "hopper"},
        {"cuda": "twelve"},
        {"driver": "latest"},
        {"python_version": "3"},
        {"cxxflags": "-O2 '"},
    ],
)
def test_bad_toolchain_options_are_usage_errors(kw):
    with pytest.raises(UsageError) as exc:
        plan("torch==2.5.1", **kw)
    assert "—" in str(exc.value) or "expected" in str(exc.value)


# --- requirements files ------------------------------------------------------------------------


def test_requirements_file_with_pins_ranges_options_markers_and_nesting(tmp_path: Path):
    (tmp_path / "base.txt").write_text("torch_xla==2.5.1  # the TPU stack\n")
    (tmp_path / "constraints.txt").write_text("torch<2.6\nnumpy<2\n")
    req = tmp_path / "requirements.txt"
    req.write_text(
        "# a comment line\n"
        "--extra-index-url https://download.pytorch.org/whl/cu124\n"
        "-i https://pypi.org/simple\n"
        "--find-links=/wheels\n"
        "--pre\n"
        "-r base.txt\n"
        "-c constraints.txt\n"
        "torch>=2.4 \\\n"
        "    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
        "Triton ; python_version < '3.0'\n"
        "transformers>=4.40  # unknown to the KB: fine\n"
        "-e ./my_local_package\n"
    )
    report, by_id = plan(files=[req])
    assert by_id["constexpr"].status is Status.AFFECTED  # torch>=2.4 constrained to <2.6
    assert by_id["donor"].status is Status.AFFECTED
    packages = report.environment["plan"]["packages"]
    assert packages["torch"]["versions"] == ["2.4.0", "2.4.1", "2.5.0", "2.5.1"]
    assert "numpy" not in packages, "constraints never add packages"
    assert packages["triton"]["inferred_from"], "the marker excluded the explicit triton line"
    assert any("my_local_package" in line for line in report.meta["ignored"])
    assert packages["torch"]["sources"][0].endswith("requirements.txt:8")


def test_free_threaded_python_version():
    inp, _, _ = build_input(PlanRequest(specs=["torch==2.9.0"], python_version="3.13t"))
    assert inp.python == (3, 13) and inp.free_threaded
    assert not build_input(PlanRequest(specs=["torch==2.9.0"], python_version="3.13"))[0].free_threaded


def test_markers_are_evaluated_for_the_target_python(tmp_path: Path):
    req = tmp_path / "r.txt"
    req.write_text('torch==2.5.1; python_version < "3.12"\ntorch==2.6.0; python_version >= "3.12"\n')
    assert status(files=[req], python_version="3.11")["constexpr"] is Status.AFFECTED
    assert status(files=[req], python_version="3.12")["constexpr"] is Status.OK


def test_wheel_urls_and_paths_name_their_version(tmp_path: Path):
    req = tmp_path / "r.txt"
    req.write_text(
        "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl\n"
        "torch_xla @ https://storage.googleapis.com/pytorch-xla-releases/wheels/tpuvm/"
        "torch_xla-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl\n"
    )
    by_status = status(files=[req])
    assert by_status["constexpr"] is Status.AFFECTED and by_status["donor"] is Status.OK


def test_pyproject_dependencies_and_named_extras(tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "myproj"\nversion = "1"\n'
        'dependencies = ["torch>=2.6"]\n'
        '[project.optional-dependencies]\ntpu = ["torch_xla==2.5.1"]\nall = ["myproj[tpu]"]\n'
    )
    assert status(files=[pyproject])["donor"] is Status.NOT_APPLICABLE
    assert status(files=[Path(f"{pyproject}[tpu]")])["donor"] is Status.AFFECTED
    assert status(files=[Path(f"{pyproject}[all]")])["donor"] is Status.AFFECTED
    with pytest.raises(UsageError, match="known: all, tpu"):
        plan(files=[Path(f"{pyproject}[gpu]")])


def test_include_cycles_are_read_once(tmp_path: Path):
    (tmp_path / "a.txt").write_text("-r b.txt\ntorch==2.5.1\n")
    (tmp_path / "b.txt").write_text("-r a.txt\n")
    assert status(files=[tmp_path / "a.txt"])["constexpr"] is Status.AFFECTED


@pytest.mark.parametrize(
    "content, line, fragment",
    [
        ("torch==2.5.1\ntorch=2.5.1\n", 2, "single '='"),
        ("torch==abc\n", 1, "cannot parse version 'abc'"),
        ("numpy\n\ntorch 2.5.1\n", 3, "no comparison operator"),
        ("torch>=\n", 1, "needs a version"),
        ("--no-such-option\n", 1, "unknown option"),
        ("torch==2.5.1 --install-everything\n", 1, "unknown option"),
        ("-r\n", 1, "needs a file name"),
        ("torch===2.5.1\n", 1, "arbitrary equality"),
        ("torch==2.5.1; python_version <\n", 1, "invalid requirement"),
        ("torch==2.5.1\ntorch==2.6.0\n", 2, "exclude each other"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, content, line, fragment):
    req = tmp_path / "requirements.txt"
    req.write_text(content)
    with pytest.raises(UsageError) as exc:
        plan(files=[req])
    message = str(exc.value)
    assert message.startswith(f"{req}:{line}: "), message
    assert fragment in message and "—" in message and "\n" not in message


def test_unreadable_binary_and_non_utf8_files(tmp_path: Path):
    with pytest.raises(UsageError, match="cannot read"):
        plan(files=[tmp_path / "missing.txt"])
    with pytest.raises(UsageError, match="is a directory"):
        plan(files=[tmp_path])
    (tmp_path / "bin.txt").write_bytes(b"\x7fELF\x00\x00\x00")
    with pytest.raises(UsageError, match="binary"):
        plan(files=[tmp_path / "bin.txt"])
    (tmp_path / "latin1.txt").write_bytes("torch==2.5.1 # caf\xe9\n".encode("latin-1"))
    with pytest.raises(UsageError, match="UTF-8"):
        plan(files=[tmp_path / "latin1.txt"])
    (tmp_path / "outer.txt").write_text("-r inner.txt\n")
    with pytest.raises(UsageError) as exc:
        plan(files=[tmp_path / "outer.txt"])
    assert str(exc.value).startswith(f"{tmp_path / 'outer.txt'}:1: ") and "inner.txt" in str(exc.value)


def test_broken_pyproject(tmp_path: Path):
    bad = tmp_path / "pyproject.toml"
    bad.write_text("[project\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        plan(files=[bad])
    bad.write_text("[tool.poetry]\nname='x'\n")
    with pytest.raises(UsageError, match=r"no \[project\] table"):
        plan(files=[bad])


def test_a_plan_needs_something_to_plan():
    with pytest.raises(UsageError):
        run_plan(PlanRequest(), registry=REG)


# --- properties --------------------------------------------------------------------------------

TORCH = [v for v in RELEASES["torch"] if Version(v) >= Version("2.0")]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TORCH), st.sampled_from(TORCH), st.sampled_from(TORCH))
def test_range_judgement_matches_brute_force(lo, hi, bound):
    """`affected` iff every release in [lo, hi] is below `bound`; `ok` iff none is."""
    spec = f">={lo},<={hi}"
    reg = Registry([_issue("p", {"torch": f"<{bound}"})])
    inside = [v for v in RELEASES["torch"] if SpecifierSet(spec).contains(v)]
    if not inside:
        return
    finding = run_plan(PlanRequest(specs=[f"torch{spec}"]), registry=reg).findings[0]
    hits = [v for v in inside if Version(v) < Version(bound)]
    expected = Status.AFFECTED if len(hits) == len(inside) else Status.LIKELY if hits else Status.OK
    assert finding.status is expected


def test_plan_is_fast():
    start = time.perf_counter()
    for _ in range(20):
        plan("torch>=2.0", "torch_xla>=2.1", "triton", cxx="clang++-19", cxxflags="-O2")
    assert (time.perf_counter() - start) / 20 < 0.1
