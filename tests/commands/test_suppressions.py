"""Suppressions end to end through the CLI: `--suppress`, inductor-doctor.toml and pyproject.toml,
with a reason, an expiry and a device; an expired one is reported and not honoured.

`fault-affected` (tests/fault_canaries) is affected on every machine in a second, so each run shows
what a suppression changes: the exit code, never the finding itself.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from fault_canaries.doctor import run_doctor
from fault_canaries.faults import FAULTS, covers
from fault_canaries.plugin import plugin_env

from inductor_doctor.schemas import validate

TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()
YESTERDAY = (dt.date.today() - dt.timedelta(days=1)).isoformat()


@pytest.fixture()
def env(tmp_path) -> Dict[str, str]:
    return {**plugin_env(tmp_path), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture()
def project(tmp_path) -> Path:
    """A project directory with its own .git, so that the config search stops there."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def check(args: List[str], env: Dict[str, str], cwd: Optional[Path] = None):
    proc = run_doctor(["check", "--only", "fault-affected,fault-clean", *args, "--format", "json"], env=env,
                      cwd=cwd)
    assert proc.stdout.strip(), proc.stderr
    doc = json.loads(proc.stdout)
    validate("check", doc)
    return proc.returncode, doc, {r["id"]: r for r in doc["results"]}


def test_unsuppressed_baseline(env, project):
    rc, _, by_id = check([], env, project)
    assert rc == 1 and by_id["fault-affected"]["status"] == "affected"
    assert by_id["fault-affected"]["suppressed"] is None


def test_suppress_on_the_command_line_and_from_the_environment(env, project):
    rc, doc, by_id = check(["--suppress", "fault-affected"], env, project)
    assert rc == 0
    assert by_id["fault-affected"]["status"] == "affected"  # still reported
    assert by_id["fault-affected"]["suppressed"] == "suppressed with --suppress"
    rc, _, by_id = check([], {**env, "INDUCTOR_DOCTOR_SUPPRESS": "fault-affected"}, project)
    assert rc == 0 and by_id["fault-affected"]["suppressed"]
    args = ["check", "--only", "fault-affected", "--suppress", "fault-affected"]
    text = run_doctor(args, env=env, cwd=project)
    assert text.returncode == 0 and "suppressed: suppressed with --suppress" in text.stdout


def test_suppression_survives_the_result_cache(env, project):
    rc, doc, _ = check([], env, project)
    assert rc == 1
    rc, doc, by_id = check(["--suppress", "fault-affected"], env, project)
    assert doc["meta"]["cached"] is True and rc == 0 and by_id["fault-affected"]["suppressed"]
    rc, doc, by_id = check([], env, project)
    assert doc["meta"]["cached"] is True and rc == 1 and by_id["fault-affected"]["suppressed"] is None


def test_config_file_with_reason_expiry_and_device(env, project):
    (project / "inductor-doctor.toml").write_text(
        "[[suppress]]\n"
        'id = "fault-affected"\n'
        'reason = "known; the fix ships with the next image"\n'
        f"until = {TOMORROW}\n"
        'device = "cpu"\n'
    )
    rc, doc, by_id = check([], env, project)
    assert rc == 0
    reason = by_id["fault-affected"]["suppressed"]
    assert reason == f"known; the fix ships with the next image until {TOMORROW}"
    # Found from a subdirectory too (the search walks up to the repository root).
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    rc, _, by_id = check([], env, sub)
    assert rc == 0 and by_id["fault-affected"]["suppressed"]
    # Another device: not this finding.
    text = (project / "inductor-doctor.toml").read_text().replace('device = "cpu"', 'device = "cuda:0"')
    (project / "inductor-doctor.toml").write_text(text)
    rc, _, by_id = check([], env, project)
    assert rc == 1 and by_id["fault-affected"]["suppressed"] is None


def test_pyproject_table(env, project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n'
        "[[tool.inductor-doctor.suppress]]\n"
        'id = "fault-affected"\n'
        'reason = "accepted by the platform team"\n'
    )
    rc, _, by_id = check([], env, project)
    assert rc == 0 and by_id["fault-affected"]["suppressed"] == "accepted by the platform team"


@covers("suppression-expired")
def test_expired_suppression_is_reported_not_honoured(env, project):
    config = project / "inductor-doctor.toml"
    config.write_text(f'[[suppress]]\nid = "fault-affected"\nreason = "was fine"\nuntil = "{YESTERDAY}"\n')
    rc, doc, by_id = check([], env, project)
    assert rc == int(FAULTS["suppression-expired"].exit)
    assert by_id["fault-affected"]["suppressed"] is None
    [note] = doc["meta"]["suppression_notes"]
    assert f"{FAULTS['suppression-expired'].reason} {YESTERDAY}: not honoured" in note and str(config) in note
    text = run_doctor(["check", "--only", "fault-affected"], env=env, cwd=project)
    assert text.returncode == 1 and "expired on" in text.stdout
    # The last valid day is the `until` day itself.
    config.write_text(f'[[suppress]]\nid = "fault-affected"\nreason = "r"\nuntil = {dt.date.today()}\n')
    assert check([], env, project)[0] == 0


def test_explicit_config_and_aliases(env, tmp_path):
    config = tmp_path / "elsewhere.toml"
    config.write_text('[[suppress]]\nid = "pytorch#151589"\nreason = "CPU runners only"\n')
    proc = run_doctor(["check", "--static", "--only", "view-dtype-align", "--config", str(config), "--format",
                       "json"], env=env)
    assert proc.returncode == 0
    [r] = json.loads(proc.stdout)["results"]
    assert r["id"] == "view-dtype-align"


def test_warnings_count_only_on_request_and_suppression_wins(env, project):
    args = ["check", "--only", "fault-warning"]
    assert run_doctor(args, env=env, cwd=project).returncode == 0
    assert run_doctor([*args, "--fail-on-warnings"], env=env, cwd=project).returncode == 1
    assert run_doctor([*args, "--fail-on-warnings", "--suppress", "fault-warning"], env=env,
                      cwd=project).returncode == 0


@covers("config-malformed")
@pytest.mark.parametrize(
    "content, words",
    [
        ("[[suppress]\nid = 1", "is not valid TOML"),
        ('[[suppress]]\nid = "fault-affected"\n', "needs a `reason`"),
        ('[[suppress]]\nid = "fault-affected"\nreason = "  "\n', "needs a `reason`"),
        ('[[suppress]]\nreason = "r"\n', "needs an `id` string"),
        ('[[suppress]]\nid = "fault-affected"\nreason = "r"\nuntil = "1/2027"\n', "`until` must be a date"),
        ('[[suppress]]\nid = "fault-affected"\nreason = "r"\nuntil = 2027\n', "`until` must be a date"),
        ('[[suppress]]\nid = "fault-affected"\nreason = "r"\ndevice = 0\n', "`device` must be a string"),
        ('[[suppress]]\nid = "no-such-issue"\nreason = "r"\n', "unknown issue 'no-such-issue'"),
        ('suppress = "fault-affected"\n', "must be an array of tables"),
        (b"\xff\xfe[[suppress]]", "is not valid TOML"),
    ],
    ids=["toml", "no-reason", "blank-reason", "no-id", "bad-date", "int-date", "device", "unknown",
         "not-array", "binary"],
)
def test_malformed_config_is_one_line_exit_2(env, project, content, words):
    config = project / "inductor-doctor.toml"
    if isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content)
    proc = run_doctor(["check", "--only", "fault-affected"], env=env, cwd=project)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert words in line and "inductor-doctor.toml" in line, line


def test_missing_config_and_unknown_suppress_id(env, tmp_path):
    proc = run_doctor(["check", "--static", "--config", str(tmp_path / "nope.toml")], env=env)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run_doctor(["check", "--static", "--suppress", "no-such-issue"], env=env)
    assert proc.returncode == 2 and "unknown issue" in proc.stderr
