"""The three recipes of docs/architecture.md, followed for real on a copy of the package.

A known issue is one module and one page, and nothing else; a command is a document, its schema and
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
from typing import List

import pytest

from inductor_doctor.render import RENDERERS
from inductor_doctor.schemas import SCHEMA_DIR

REPO = Path(__file__).resolve().parents[2]

ISSUE_MODULE = '''"""A recipe's example: an issue that is there when RECIPE_EXAMPLE=1 is set."""

from typing import List

from inductor_doctor.kb._catalog import one
from inductor_doctor.core.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)


def rule(facts) -> List[RuleOutcome]:
    if facts.env.get("TORCHINDUCTOR_RECIPE_EXAMPLE") == "1":
        return one(Status.AFFECTED, "TORCHINDUCTOR_RECIPE_EXAMPLE is set")
    return one(Status.OK, "TORCHINDUCTOR_RECIPE_EXAMPLE is not set")


ISSUE = KnownIssue(
    id="recipe-example",
    title="The recipe's example issue",
    severity=Severity.ERROR,
    devices=(DeviceKind.TOOLCHAIN,),
    upstream=("example-org/example#1",),
    summary="An issue added by following docs/architecture.md, recipe 1.",
    signatures=(Signature(r"recipe example failure"),),
    workarounds=(Workaround("Unset the variable", "unset TORCHINDUCTOR_RECIPE_EXAMPLE", "env"),),
    rule=rule,
)
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


def _regenerate_index(root: Path) -> None:
    """Where the registry keeps an index of the built-in issues, the recipe regenerates it."""
    index = root / "inductor_doctor" / "kb" / "_index.py"
    if index.exists():
        subprocess.run([sys.executable, "-m", "inductor_doctor.kb._index", "--write"], check=True,
                       env={**os.environ, "PYTHONPATH": str(root)}, cwd=str(root), timeout=120)


def test_recipe_1_a_known_issue_is_one_module_and_one_page(copy: Path):
    (copy / "inductor_doctor" / "kb" / "recipe_example.py").write_text(ISSUE_MODULE)
    (copy / "docs" / "issues" / "recipe-example.md").write_text("# recipe-example\n\nThe example's page.\n")
    _regenerate_index(copy)
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


FACT_FIELD = '''    #: The kernel's transparent hugepage mode ("always", "madvise", "never"); None: not Linux.
    hugepages: Optional[str] = fact(None, probe="hugepages", merge="transparent hugepages")
'''

FACT_PROBE = '''"""The kernel's transparent hugepage mode, read from sysfs."""

from typing import Mapping, Optional

from inductor_doctor.probe import Step

SYSFS = "/sys/kernel/mm/transparent_hugepage/enabled"


def hugepages(environ: Mapping[str, str]) -> Optional[str]:
    try:
        with open(environ.get("RECIPE_HUGEPAGES_FILE", SYSFS), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")] if "[" in text else text.strip() or None


STEP = Step("hugepages", ("environ",), hugepages)
'''


def test_recipe_4_a_fact_is_one_declaration_and_its_probe(copy: Path, tmp_path: Path):
    facts = copy / "inductor_doctor" / "core" / "facts.py"
    text = facts.read_text()
    marker = "    toolkit: Optional[CudaToolkitInfo]"  # a section of Facts
    assert text.count(marker) == 1
    facts.write_text(text.replace(marker, FACT_FIELD + marker, 1))
    (copy / "inductor_doctor" / "probe" / "hugepages.py").write_text(FACT_PROBE)
    modes = []
    for mode in ("madvise", "never"):
        path = tmp_path / f"{mode}.txt"
        path.write_text(f"always [{mode}] never\n" if mode == "madvise" else "always madvise [never]\n")
        modes.append(str(path))

    probed = doctor(copy, ["probe", "--format", "json"], RECIPE_HUGEPAGES_FILE=modes[0])
    assert probed.returncode == 0, probed.stderr
    assert json.loads(probed.stdout)["environment"]["hugepages"] == "madvise"

    code = ("import json, sys\n"
            "from inductor_doctor.schemas import load, validate\n"
            "from inductor_doctor.check.cache import stable_facts\n"
            "from inductor_doctor.probe import gather\n"
            "facts = gather(sys.executable)\n"
            "schema = load('environment')\n"
            "validate('environment', {**facts.to_dict(), 'host': {}})\n"
            "print(json.dumps([schema['properties']['hugepages'],\n"
            "                  stable_facts(facts.to_dict())['hugepages']]))\n")
    env = {**os.environ, "PYTHONPATH": str(copy), "RECIPE_HUGEPAGES_FILE": modes[1],
           "INDUCTOR_DOCTOR_CACHE_DIR": str(copy / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=str(copy), env=env)
    assert out.returncode == 0, out.stderr
    schema, keyed = json.loads(out.stdout)
    assert schema == {"type": ["string", "null"]}, "the schema says what the fact is"
    assert keyed == "never", "the fact is part of a canary's key"

    reports = []
    for i, mode in enumerate(modes):
        report = tmp_path / f"report{i}.json"
        done = doctor(copy, ["check", "--static", "--only", "torch-missing", "--format", "json",
                             "--output", str(report)], RECIPE_HUGEPAGES_FILE=mode)
        assert report.is_file(), done.stderr
        reports.append(str(report))
    merged = doctor(copy, ["merge", *reports, "--format", "json"])
    assert merged.returncode in (0, 1), merged.stderr
    differences = json.loads(merged.stdout)["environment"]["differences"]
    assert any(d["label"] == "transparent hugepages" for d in differences), differences
