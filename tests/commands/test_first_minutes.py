"""A new user's first minutes, as they see them: the output at 80 columns, what is said first, and
the small things a user trips on. Every test runs the real CLI.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import run_cli
from fault_canaries.plugin import plugin_env

pytestmark = pytest.mark.slow
NARROW = {"COLUMNS": "80", "NO_COLOR": "1"}


def ids_of_list() -> List[str]:
    return [i["id"] for i in json.loads(run_cli(["list", "--format", "json"]).stdout)["issues"]]


# --- readable where people read it ------------------------------------------------------------------


def test_check_at_80_columns_keeps_every_id_whole_and_folds_what_cannot_arise():
    out = run_cli(["check", "--static", "--all"], env=NARROW).stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    from inductor_doctor.kb import registry
    from inductor_doctor.kb._artifacts import artifact_only

    per_artifact = {i.id for i in registry() if artifact_only(i)}  # rows of `--artifact` only
    assert per_artifact and per_artifact <= set(ids_of_list())
    for issue_id in ids_of_list():
        if issue_id in per_artifact:
            assert not re.search(rf"(^|\s){re.escape(issue_id)}(\s|$)", out, re.M), issue_id
            continue
        assert re.search(rf"(^|\s){re.escape(issue_id)}(\s|$)", out, re.M), f"{issue_id} cut or missing"
    assert "…" not in out
    folded = run_cli(["check", "--static"], env=NARROW).stdout
    assert "cannot arise here (not-applicable); `--all` lists them" in folded
    assert "n/a" not in folded.split("cannot arise here")[0] or "--all" in folded
    assert "* decided by a static rule" in folded  # which oks come from a canary, which from a rule


def test_list_at_80_columns_has_each_id_whole_on_its_own_line():
    out = run_cli(["list"], env=NARROW).stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    starts = {line.split()[0] for line in lines if line and not line.startswith(" ")}
    assert set(ids_of_list()) <= starts


def test_merge_at_80_columns_cuts_no_header(tmp_path):
    a = tmp_path / "a.json"
    run_cli(["check", "--static", "--format", "json", "--output", str(a)])
    out = run_cli(["merge", str(a)], env=NARROW).stdout
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80


def test_when_nothing_is_wrong_the_last_line_says_so():
    out = run_cli(["check", "--static"], env=NARROW).stdout
    ending = " ".join(" ".join(out.rstrip().splitlines()[-3:]).split())
    assert "No known issue affects this environment: " in ending and ending.endswith(".")


@pytest.mark.parametrize("only,says", [
    ("compiler-too-old", "environment: 1 check ok, by a static rule"),
    ("compiler-too-old,const-data-ptr-abi", "environment: 2 checks ok, each by a static rule"),
])
def test_the_last_line_counts_in_english(only: str, says: str):
    out = run_cli(["check", "--static", "--only", only], env=NARROW).stdout
    assert says in " ".join(" ".join(out.rstrip().splitlines()[-2:]).split()), out


def test_the_canaries_are_counted_once_and_alike(tmp_path):
    """The footer's "N canaries unchanged since the last run" and the last line count the same
    canaries: here one decides its check (cxx-compiler-missing) and one cannot (compile-workers-fail:
    no Triton, no worker pool to start), so "2 canaries" is never beside "1 of them by a canary"."""
    env = {**NARROW, "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    args = ["check", "--only", "cxx-compiler-missing,compile-workers-fail", "-q"]
    first = run_cli(args, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    data = json.loads(run_cli([*args, "--format", "json"], env=env).stdout)
    canaries = data["meta"]["canaries_run"] + data["meta"]["canaries_cached"]
    by_canary = [r for r in data["results"] if r["status"] == "ok" and r["basis"] == "canary"]
    assert canaries == 2 and len(by_canary) == 1, data["meta"]
    again = " ".join(run_cli(args, env=env).stdout.split())
    assert "(2 canaries unchanged since the last run" in again, again
    assert "2 checks ok: 1 by a static rule, 1 by its canary (2 canaries ran: 1 decided its check, the " \
           "other 1 left its check to its static rule)." in again, again
    assert "could not decide" not in again, "nothing is inconclusive: no canary is said to be"


def test_wrapped_workarounds_keep_their_indent(tmp_path):
    out = run_cli(["explain", "block-mask-cpu"], env=NARROW).stdout
    block = [ln for ln in out.split("What to do:", 1)[1].strip("\n").split("\n\n", 1)[0].splitlines() if ln]
    for line in block:
        assert line.startswith("  "), f"a wrapped line went back to the margin: {line!r}"
    continuations = [ln for ln in block if not ln.lstrip().startswith(("-", "$"))]
    assert all(ln.startswith("    ") for ln in continuations), continuations


# --- nothing to check is not a pass ------------------------------------------------------------------


@pytest.mark.heavy
def test_no_torch_is_said_first_and_can_fail_a_gate(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    proc = run_cli(["check", "--static", "--python", python], env=NARROW)
    assert proc.returncode == 0
    head = " ".join(proc.stdout.split("issue ", 1)[0].split())  # the notice wraps at 80 columns
    assert f"torch is not installed for {python}" in head and "--python" in head and "plan" in head
    data = json.loads(run_cli(["check", "--static", "--python", python, "--format", "json"]).stdout)
    [finding] = [r for r in data["results"] if r["id"] == "torch-missing"]
    assert finding["status"] == "inconclusive"
    assert data["meta"]["notices"] and "torch is not installed" in data["meta"]["notices"][0]
    gate = run_cli(["check", "--static", "--python", python, "--fail-on", "inconclusive", "--quiet"])
    assert gate.returncode == 1


# --- explain answers first -------------------------------------------------------------------------


def test_explain_first_screen_is_short_and_says_what_to_run():
    out = run_cli(["explain", "block-mask-cpu"], env=NARROW).stdout
    lines = out.splitlines()
    assert len(lines) <= 40, len(lines)
    assert any("$ pip install --upgrade 'torch>=2.8'" in ln for ln in lines[:30])
    assert "--full" in lines[-1] or "--full" in lines[-2]
    full = run_cli(["explain", "block-mask-cpu", "--full"], env=NARROW).stdout
    assert len(full.splitlines()) > 3 * len(lines) and "## Root cause" in full


# --- small things a user trips on ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [["probe"], ["list"], ["explain", "block-mask-cpu"]])
def test_a_shared_format_variable_is_ignored_where_a_command_lacks_it(command):
    proc = run_cli(command, env={"INDUCTOR_DOCTOR_FORMAT": "markdown"})
    assert proc.returncode == 0, proc.stderr


def test_a_shared_format_variable_applies_where_it_can():
    proc = run_cli(["check", "--static", "--only", "block-mask-cpu"],
                   env={"INDUCTOR_DOCTOR_FORMAT": "markdown"})
    assert proc.returncode == 0 and proc.stdout.startswith("### inductor-doctor")
    explicit = run_cli(["probe", "--format", "markdown"])
    assert explicit.returncode == 2 and len(explicit.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name, value, words", [
    ("INDUCTOR_DOCTOR_FAIL_ON", "inconclusiv", "not one of affected, likely, inconclusive, never"),
    ("INDUCTOR_DOCTOR_FORMAT", "yaml", "not one of text, json, markdown"),
    ("INDUCTOR_DOCTOR_TIMEOUT", "soon", "is not a number"),
    ("INDUCTOR_DOCTOR_JOBS", "0", "is below 1"),
    ("INDUCTOR_DOCTOR_STATIC", "maybe", "not a yes/no value"),
])
def test_a_bad_variable_value_is_a_usage_error_naming_the_variable(name, value, words):
    """As a bad option is: a CI gate whose variable is misspelt must fail, not quietly weaken."""
    proc = run_cli(["check", "--only", "torch-missing", "-q"], env={name: value})
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert f"{name}={value!r}" in line and words in line, line


def test_a_variable_spelt_right_gates_and_a_shared_one_stays_quiet():
    """FAIL_ON=inconclusive fails a check of an interpreter without torch; a FORMAT that only
    another command can use is ignored where it cannot apply (the README's promise)."""
    env = {"INDUCTOR_DOCTOR_FAIL_ON": "inconclusive", "INDUCTOR_DOCTOR_STATIC": "1"}
    proc = run_cli(["check", "--only", "torch-missing", "-q", "--python", sys.executable], env=env)
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr
    probe = run_cli(["probe", "--format", "json"], env={"INDUCTOR_DOCTOR_FORMAT": "markdown"})
    assert probe.returncode == 0 and probe.stderr == "" and json.loads(probe.stdout)


def test_an_unknown_doctor_variable_is_one_warning_line():
    proc = run_cli(["list", "--format", "json"], env={"INDUCTOR_DOCTOR_FAIL_ONN": "likely"})
    assert proc.returncode == 0 and json.loads(proc.stdout)["issues"]
    [line] = proc.stderr.strip().splitlines()
    assert "warning: INDUCTOR_DOCTOR_FAIL_ONN" in line and "did you mean INDUCTOR_DOCTOR_FAIL_ON?" in line


def test_plan_says_a_release_is_unknown_and_a_file_names_nothing(tmp_path):
    proc = run_cli(["plan", "torch==99.0"], env=NARROW)
    assert "torch 99.0 is newer than any release the knowledge base knows" in proc.stdout.replace("\n", " ")
    assert "triton triton" not in proc.stdout
    empty = tmp_path / "requirements.txt"
    empty.write_text("# nothing yet\n")
    bad = run_cli(["plan", "-r", str(empty)])
    assert bad.returncode == 2 and "names no requirement" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_merge_counts_the_same_report_once(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_cli(["check", "--static", "--format", "json", "--output", str(a)])
    b.write_text(a.read_text())
    one = json.loads(run_cli(["merge", str(a), "--format", "json"]).stdout)
    two = json.loads(run_cli(["merge", str(a), str(a), str(b), "--format", "json"]).stdout)
    assert two["summary"] == one["summary"] and two["meta"]["reports"] == 1
    assert any("same report" in n and str(b) in n for n in two["meta"]["notes"])


def test_explain_suggests_only_real_near_misses_and_refuses_id_with_log(tmp_path):
    proc = run_cli(["explain", "pytorch#999999"])
    assert proc.returncode == 2 and "did you mean" not in proc.stderr and "cites" in proc.stderr
    typo = run_cli(["explain", "view-dtype-alig"])
    assert typo.returncode == 2 and "view-dtype-align" in typo.stderr
    log = tmp_path / "x.log"
    log.write_text("error\n")
    both = run_cli(["explain", "block-mask-cpu", "--log", str(log)])
    assert both.returncode == 2 and "not both" in both.stderr


def test_probe_says_how_long_it_took_once():
    out = run_cli(["probe"]).stdout
    assert out.count("probed in") == 1


def test_a_timed_out_canary_says_where_it_was(tmp_path):
    env = {**plugin_env(tmp_path), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    data = json.loads(run_cli(["check", "--only", "fault-hang", "--timeout", "2", "--no-cache", "--format",
                               "json"], env=env).stdout)
    [finding] = data["results"]
    assert finding["status"] == "inconclusive" and "timed out after 2s" in finding["reason"]
    assert finding["evidence"] and finding["evidence"][0].startswith("it was at ")
    assert "hang.py" in finding["evidence"][0]


def test_progress_shows_the_phase_and_each_running_canary_with_its_time(tmp_path):
    """At a terminal: the phase from the first frame, then the running canary and its seconds."""
    env = {**os.environ, **plugin_env(tmp_path), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "FAULT_RECORD_DIR": str(tmp_path), "FAULT_RECORD_SLEEP": "3"}
    env.pop("NO_COLOR", None)
    pid, fd = pty.fork()
    if pid == 0:  # the child: the doctor, with a terminal on stderr
        # fault-hang runs until its 3 s timeout: long enough to be seen running on any machine.
        os.execvpe(sys.executable, [sys.executable, "-m", "inductor_doctor", "check", "--only", "fault-hang",
                                    "--no-cache", "--timeout", "3"], env)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    os.waitpid(pid, 0)
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen).decode("utf-8", "replace")
    assert "probing the toolchain" in text or "running canaries" in text, text[-2000:]
    assert re.search(r"fault-hang@cpu [1-9]\d*s", text), text[-2000:]
    assert "0/0 done" not in text


def _by_id(data: Dict) -> Dict[str, Dict]:
    return {r["id"]: r for r in data["results"]}


def test_usage_errors_are_one_line_in_plain_words():
    for args, words in ((["check", "--format", "xml"], "'xml' is not one of text, json, markdown"),
                        (["check", "--timeout", "0"], "is below 1"),
                        (["check", "--jobs", "two"], "is not a whole number")):
        proc = run_cli(args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert words in proc.stderr, proc.stderr


def test_every_option_has_a_help_line():
    for command in ("check", "probe", "explain", "list", "plan", "merge"):
        lines = run_cli([command, "--help"], env={"COLUMNS": "100"}).stdout.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^\s{2}(-\w, )?--[\w-]+( [A-Z\[][^ ]*)?\s*$", line):
                assert i + 1 < len(lines) and re.match(r"^\s{8,}\S", lines[i + 1]), (command, line)


def test_the_entry_point_survives_a_broken_import(tmp_path):
    """The doctor's own failure is exit 3 with a repair line, even before the CLI can load."""
    shadow = tmp_path / "click"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('click is broken here')\n")
    proc = subprocess.run([sys.executable, "-m", "inductor_doctor", "list"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{Path.cwd()}"}, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "--force-reinstall inductor-doctor" in proc.stderr


NO_RICH = '''
import sys

class _NoRich:
    """rich uninstalled: every import of it fails, as after `pip uninstall rich`."""

    def find_spec(self, name, path=None, target=None):
        if name == "rich" or name.startswith("rich."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoRich())
'''


def test_a_dependency_missing_after_start_is_a_repair_line(tmp_path):
    """rich is imported only when the output is rendered, long after the CLI started: its absence
    is still the doctor's own broken installation (exit 3, one line saying how to reinstall), never
    "internal error ... this is a bug"."""
    (tmp_path / "sitecustomize.py").write_text(NO_RICH)
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{Path.cwd()}"}
    for args in (["check", "--static", "--only", "torch-missing"], ["probe"]):
        proc = run_cli(args, env=env)
        assert proc.returncode == 3, (args, proc.stderr)
        [line] = proc.stderr.strip().splitlines()
        assert "--force-reinstall inductor-doctor" in line and "No module named 'rich'" in line, line
        assert "bug" not in line, line
