"""The three recipes of docs/architecture.md, followed for real on a copy of the package.

A known issue is a data file, its code and a page, and nothing else; a command is a document, its schema and
its renderer; a format is a renderer module and a line in `RENDERERS`. Each is done here exactly as
the page says, on a copy of the package, and the CLI of that copy is asked whether it worked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from inductor_doctor.render import RENDERERS
from inductor_doctor.schemas import SCHEMA_DIR

REPO = Path(__file__).resolve().parents[2]

ISSUE_DATA = """id = "recipe-example"
title = "The recipe's example issue"
upstream = ["example-org/example#1"]
severity = "error"
devices = ["toolchain"]
summary = "An issue added by following docs/architecture.md, recipe 1."

[[signatures]]
pattern = 'recipe example failure'

[[workarounds]]
text = "Unset the variable"
command = "unset TORCHINDUCTOR_RECIPE_EXAMPLE"
kind = "env"
"""

ISSUE_MODULE = '''"""A recipe's example: an issue that is there when RECIPE_EXAMPLE=1 is set."""

from typing import Dict, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one


def rule(facts) -> List[RuleOutcome]:
    if facts.env.get("TORCHINDUCTOR_RECIPE_EXAMPLE") == "1":
        return one(Status.AFFECTED, "TORCHINDUCTOR_RECIPE_EXAMPLE is set")
    return one(Status.OK, "TORCHINDUCTOR_RECIPE_EXAMPLE is not set")
'''


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """The package and its docs, copied: the recipes change the copy, never the checkout."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "inductor_doctor", root / "inductor_doctor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "docs", root / "docs")
    return root


def doctor(root: Path, args: List[str], **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(root), "INDUCTOR_DOCTOR_CACHE_DIR": str(root / "cache"), **env}
    return subprocess.run([sys.executable, "-m", "inductor_doctor", *args], capture_output=True, text=True,
                          env=full, cwd=str(root), timeout=300)


def test_recipe_1_a_known_issue_is_a_data_file_its_code_and_a_page(copy: Path):
    before = _files(copy)
    (copy / "inductor_doctor" / "kb" / "recipe_example.toml").write_text(ISSUE_DATA)
    (copy / "inductor_doctor" / "kb" / "recipe_example.py").write_text(ISSUE_MODULE)
    (copy / "docs" / "issues" / "recipe-example.md").write_text("# recipe-example\n\nThe example's page.\n")
    after = _files(copy)
    added = {"inductor_doctor/kb/recipe_example.toml", "inductor_doctor/kb/recipe_example.py",
             "docs/issues/recipe-example.md"}
    assert set(after) - set(before) == added
    assert {p: after[p] for p in before} == before, "the recipe adds files and changes none"
    listed = json.loads(doctor(copy, ["list", "--format", "json"]).stdout)
    assert "recipe-example" in [i["id"] for i in listed["issues"]]
    page = doctor(copy, ["explain", "example-org/example#1", "--full"], NO_COLOR="1")
    assert page.returncode == 0 and "The example's page." in page.stdout
    ok = doctor(copy, ["check", "--static", "--only", "recipe-example", "--format", "json"])
    assert [r["status"] for r in json.loads(ok.stdout)["results"]] == ["ok"]
    bad = doctor(copy, ["check", "--static", "--only", "recipe-example"], TORCHINDUCTOR_RECIPE_EXAMPLE="1")
    assert bad.returncode == 1 and "unset TORCHINDUCTOR_RECIPE_EXAMPLE" in bad.stdout
    log = copy / "failure.log"
    log.write_text("Traceback (most recent call last):\n  ...\nRuntimeError: recipe example failure\n")
    triaged = json.loads(doctor(copy, ["explain", "--log", str(log), "--format", "json"]).stdout)
    assert triaged["results"][0]["id"] == "recipe-example"


def _files(root: Path) -> Dict[str, bytes]:
    """The copy's files and their content, what the doctor's runs write (its cache, bytecode) apart."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.parts[len(root.parts)] != "cache"}


def test_recipe_2_every_command_has_a_document_schema_and_renderer():
    """What recipe 2 asks of a command, checked for the ones that exist."""
    documents = {"check", "plan", "probe", "list", "explain", "triage", "merge", "report", "fix"}
    for command in documents:
        assert (SCHEMA_DIR / f"{command}.schema.json").is_file(), command
        assert any(c == command for c, _ in RENDERERS), command


def test_recipe_3_a_format_is_a_renderer_and_a_line(copy: Path):
    render = copy / "inductor_doctor" / "render"
    (render / "list_markdown.py").write_text(
        '"""`list` as Markdown."""\n\n\ndef render(data, **_):\n'
        '    rows = [f"| `{i[\'id\']}` | {i[\'title\']} |" for i in data["issues"]]\n'
        '    return "\\n".join(["| id | title |", "|---|---|", *rows]) + "\\n"\n')
    init = (render / "__init__.py").read_text()
    init = init.replace('    ("list", "text"): "list_text",', '    ("list", "text"): "list_text",\n'
                        '    ("list", "markdown"): "list_markdown",')
    (render / "__init__.py").write_text(init)
    cli = copy / "inductor_doctor" / "cli.py"
    text = cli.read_text()
    marker = '@app.command(name="list"'
    head, tail = text.split(marker, 1)
    tail = tail.replace('@format_option(("text", "json"))', "@format_option()", 1)
    cli.write_text(head + marker + tail)
    out = doctor(copy, ["list", "--format", "markdown"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("| id | title |") and "| `block-mask-cpu` |" in out.stdout
