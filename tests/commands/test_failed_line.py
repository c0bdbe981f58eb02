"""A check or plan whose report goes to `--output` still says on stderr, in one line, why it failed.

Gate 2 of docs/docker.md keeps its JSON report in the image; when it fails, the layer with the file
is never committed, and the build log said only "exit status 1". tests/house/test_container_build.py
asserts the line in a real build log; these run everywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from conftest import run_cli, without_progress


def _python_only_path(tmp_path: Path) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    return str(bindir)


def test_a_failing_static_check_names_the_findings_and_the_report(tmp_path):
    report = tmp_path / "inductor-doctor-build.json"
    proc = run_cli(["check", "--static", "--fail-on", "likely", "--format", "json", "--output", str(report)],
                   env={"PATH": _python_only_path(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "" and report.is_file()
    (line,) = without_progress(proc.stderr)  # a run over two seconds also says its stages
    assert line.startswith("inductor-doctor: 1 affected: cxx-compiler-missing on cpu"), line
    assert line.endswith(f"; the report is in {report}"), line


def test_a_failing_plan_names_the_pin_it_predicts_for(tmp_path):
    report = tmp_path / "plan.txt"
    proc = run_cli(["plan", "torch==2.5.1", "--output", str(report)])
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line == f"inductor-doctor: 1 affected: triton-constexpr-dynamic on cuda; the report is in {report}"
    assert "AFFECTED  triton-constexpr-dynamic on cuda" in report.read_text()


def test_a_passing_run_writes_nothing_on_stderr(tmp_path):
    report = tmp_path / "plan.json"
    proc = run_cli(["plan", "torch==2.13.0", "--format", "json", "--output", str(report)])
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
