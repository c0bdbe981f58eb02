"""The command line as a user meets it: help, list, explain, exit codes, JSON validity, no torch import."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import run_cli, run_json

from inductor_doctor.schemas import validate

SEED_IDS = {"block-mask-cpu", "triton-constexpr-dynamic", "view-dtype-align", "const-data-ptr-abi",
            "xla-donor-hash"}


@pytest.fixture()
def poisoned_torch(tmp_path: Path) -> dict:
    """A PYTHONPATH whose torch, triton and torch_xla record any import and then fail it."""
    marker = tmp_path / "imported"
    for name in ("torch", "triton", "torch_xla"):
        pkg = tmp_path / "poison" / name
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
            f"raise ImportError('inductor-doctor must not import {name} in its own process')\n"
        )
    return {"env": {"PYTHONPATH": str(tmp_path / "poison")}, "marker": marker}


@pytest.mark.parametrize(
    "args",
    [["--help"], ["list"], ["list", "--format", "json"], ["explain", "view-dtype-align"],
     ["explain", "pytorch#151589", "--format", "json"], ["check", "--static", "--format", "json"]],
)
def test_cli_never_imports_torch(args, poisoned_torch):
    proc = run_cli(args, env=poisoned_torch["env"])
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not poisoned_torch["marker"].exists(), poisoned_torch["marker"].read_text()


def test_version():
    proc = run_cli(["--version"])
    assert proc.returncode == 0
    assert proc.stdout.startswith("inductor-doctor ")


def test_python_m_and_console_script_agree():
    import shutil
    import subprocess

    script = shutil.which("inductor-doctor")
    assert script, "the console script is installed"
    a = subprocess.run([script, "list", "--format", "json"], capture_output=True, text=True)
    b = run_cli(["list", "--format", "json"])
    assert a.returncode == b.returncode == 0
    assert json.loads(a.stdout)["issues"] == json.loads(b.stdout)["issues"]


def test_list_has_seed_issues_and_valid_schema():
    data = run_json(["list"])
    validate("list", data)
    ids = {i["id"] for i in data["issues"]}
    assert SEED_IDS <= ids


@pytest.mark.parametrize(
    "ref,expected",
    [
        ("pytorch#151290", "block-mask-cpu"), ("pytorch#151887", "block-mask-cpu"),
        ("pytorch#136504", "triton-constexpr-dynamic"), ("pytorch#136512", "triton-constexpr-dynamic"),
        ("fla#160", "triton-constexpr-dynamic"),
        ("fla-org/flash-linear-attention#160", "triton-constexpr-dynamic"),
        ("pytorch#151589", "view-dtype-align"), ("pytorch/pytorch#151859", "view-dtype-align"),
        ("ComfyUI-GGUF#257", "view-dtype-align"), ("city96/ComfyUI-GGUF#257", "view-dtype-align"),
        ("flashinfer#872", "const-data-ptr-abi"), ("flashinfer-ai/flashinfer#872", "const-data-ptr-abi"),
        ("pytorch#169926", "const-data-ptr-abi"),
        ("xla#8464", "xla-donor-hash"), ("pytorch/xla#8467", "xla-donor-hash"),
        ("https://github.com/pytorch/pytorch/issues/151589", "view-dtype-align"),
    ],
)
def test_explain_resolves_upstream_refs(ref, expected):
    data = run_json(["explain", ref])
    validate("explain", data)
    assert data["issue"]["id"] == expected
    assert data["page"], "every issue has its docs page"


def test_explain_text_shows_page_workarounds_and_reproducer():
    """The first screen answers (what, here, what to run); --full adds the page and the reproducer."""
    proc = run_cli(["explain", "view-dtype-align"], env={"NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "TORCHINDUCTOR_ALIGNMENT_ASSERTS=0" in out
    assert "Reproducer" not in out and "--full" in out
    assert "\x1b[" not in out, "no colour when stdout is not a terminal"
    full = run_cli(["explain", "view-dtype-align", "--full"], env={"NO_COLOR": "1"}).stdout
    assert full.startswith(out.rsplit("More: ", 1)[0])
    assert "Reproducer" in full and "view(dtype=torch.float32)" in full
    assert "\x1b[" not in full


def test_unknown_issue_is_usage_error_with_closest_ids():
    proc = run_cli(["explain", "view-dtype-alig"])
    assert proc.returncode == 2
    assert "view-dtype-align" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, "one line"


def test_unknown_only_id_is_usage_error():
    proc = run_cli(["check", "--static", "--only", "no-such-issue"])
    assert proc.returncode == 2
    assert "unknown issue" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_option_is_usage_error():
    proc = run_cli(["check", "--fail-on", "sometimes"])
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_check_static_json_is_schema_valid_with_seed_ids(tmp_path):
    data = run_json(["check", "--static", "--no-cache"])
    validate("check", data)
    assert {r["id"] for r in data["results"]} >= SEED_IDS
    assert data["schema"] == "inductor-doctor/check/v1"
    assert set(data["summary"]) == {"affected", "likely", "ok", "not-applicable", "inconclusive"}
    assert sum(data["summary"].values()) == len(data["results"])


def test_check_json_stdout_is_only_json_and_output_file(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli(["check", "--static", "--format", "json", "--output", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    validate("check", json.loads(out.read_text()))


def test_markdown_and_text_render(tmp_path):
    md = run_cli(["check", "--static", "--format", "markdown"])
    assert md.returncode == 0
    assert md.stdout.startswith("### inductor-doctor") and "| issue |" in md.stdout
    text = run_cli(["check", "--static"], env={"NO_COLOR": "1"})
    assert text.returncode == 0
    assert "knowledge base" in text.stdout and "\x1b[" not in text.stdout


def test_env_var_sets_options():
    proc = run_cli(["check", "--static"], env={"INDUCTOR_DOCTOR_FORMAT": "json"})
    assert proc.returncode == 0
    json.loads(proc.stdout)


def test_fail_on_never_and_only_skip(tmp_path):
    data = run_json(["check", "--static", "--only", "xla-donor-hash,view-dtype-align", "--skip",
                     "view-dtype-align"])
    assert {r["id"] for r in data["results"]} == {"xla-donor-hash"}
    proc = run_cli(["check", "--static", "--fail-on", "never"])
    assert proc.returncode == 0


def test_doctor_failure_is_exit_3_without_traceback(tmp_path):
    """A bug inside the doctor (here: a knowledge-base module that raises on import) is exit 3."""
    code = (
        "import sys, inductor_doctor.kb as kb, inductor_doctor.kb._issue_files as files\n"
        "def boom(): raise RuntimeError('kaboom')\n"
        "kb.registry.cache_clear(); kb.entries.cache_clear()\n"
        "kb._builtin_issues = boom; files.entries = boom\n"
        "from inductor_doctor.cli import main\n"
        "sys.exit(main(['list']))\n"
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 3
    assert "internal error" in proc.stderr and "Traceback" not in proc.stderr
