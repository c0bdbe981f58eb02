"""A run longer than two seconds says its stages on stderr, terminal or not; stdout stays the document.

Before, after the machine changed, `report` and a JSON `check` sat silent for 16-21 s when piped:
progress was a live display for a terminal only, and nothing at all otherwise. Piped, a run that
ends within `QUIET_S` still says nothing; a longer one writes one plain line per stage (and in a
stage that goes on, a line every `HEARTBEAT_S`), never on stdout, never with `--quiet`.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import PROGRESS_LINE, run_cli, without_progress

from inductor_doctor.render.progress import LineProgress


def slow_interpreter(tmp_path: Path, seconds: float) -> str:
    """This interpreter behind a wrapper that first sleeps: every process of the target (its
    self-description, the live probe's `import torch`) takes that much longer, as on a cold disk."""
    wrapper = tmp_path / "slow" / "bin" / "python"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f"#!/bin/sh\nsleep {seconds}\nexec {os.path.realpath(sys.executable)} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


# --- the lines ------------------------------------------------------------------------------------


def test_a_short_run_says_nothing() -> None:
    out = io.StringIO()
    lines = LineProgress(out, quiet_s=0.5)
    lines.phase("probing the toolchain")
    lines.planned(2)
    lines.finished("a@cpu", "ok")
    lines.close()
    assert out.getvalue() == ""


def test_a_long_run_says_each_stage_once_and_a_long_stage_now_and_then() -> None:
    out = io.StringIO()
    lines = LineProgress(out, quiet_s=0.3, heartbeat_s=1.0)
    lines.phase("probing the toolchain")
    time.sleep(0.6)  # past the quiet time: the stage is said by then, once
    lines.phase("probing the toolchain")
    lines.planned(3)
    time.sleep(2.3)  # a stage that goes on: "(still)"
    lines.finished("block-mask-cpu@cpu", "ok")
    lines.close()
    said = out.getvalue().splitlines()
    assert all(PROGRESS_LINE.match(line) for line in said), said
    assert said[0].startswith("inductor-doctor: probing the toolchain … ")
    assert said[1].startswith("inductor-doctor: running 3 canaries … ")
    assert any(line.startswith("inductor-doctor: running 3 canaries (still) … ") for line in said[2:]), said
    assert sum(line.startswith("inductor-doctor: probing the toolchain … ") for line in said) == 1


def test_a_closed_stream_is_not_worth_failing_for() -> None:
    out = io.StringIO()
    lines = LineProgress(out, quiet_s=0.0)
    out.close()
    lines.phase("checking")
    lines.close()


# --- through the commands, piped ------------------------------------------------------------------


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> str:
    return slow_interpreter(tmp_path_factory.mktemp("slow"), 2.5)


def test_a_json_check_piped_says_its_stages_on_stderr_and_only_json_on_stdout(slow: str, tmp_path) -> None:
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_cli(["check", "--only", "torch-missing", "--python", slow, "--format", "json"], env=env)
    assert proc.returncode in (0, 1), proc.stderr
    json.loads(proc.stdout)  # the document alone
    said = proc.stderr.strip().splitlines()
    assert said and all(PROGRESS_LINE.match(line) for line in said), proc.stderr
    assert any("import torch" in line for line in said), said
    quiet = run_cli(["check", "--only", "torch-missing", "--python", slow, "--format", "json", "-q"], env=env)
    assert quiet.stderr == "" and json.loads(quiet.stdout)


@pytest.mark.heavy
def test_a_report_piped_says_its_stages(slow: str, tmp_path) -> None:
    """`report` runs torch's collect_env beside the check: the wait for it is a stage too."""
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_cli(["report", "--static", "--python", slow, "--format", "json"], env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)
    said = proc.stderr.strip().splitlines()
    assert said and all(PROGRESS_LINE.match(line) for line in said), proc.stderr
    assert without_progress(proc.stderr) == []
