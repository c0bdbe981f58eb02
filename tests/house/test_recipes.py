"""The recipes of docs/architecture.md, followed for real on a copy of the package.

A known issue is a data file, its code and a page, and nothing else; a command is one module in
`commands/`, its document's schema, its renderer and its click command; a format is a renderer
module and a line in `RENDERERS`. Each is done here exactly as
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


COMMAND_MODULE = '''"""`inductor-doctor count`: how many issues a check would look at (the recipe\'s example).

The verb: the selection is the service's (`check.flow.select_issues`, what `check --only/--skip`
checks); the command returns its document.
"""

from dataclasses import dataclass
from typing import Any, Dict

from inductor_doctor.check.flow import select_issues
from inductor_doctor.core.document import Document
from inductor_doctor.kb import KB_VERSION


@dataclass
class Count(Document):
    issues: int
    command: str = "count"
    kb_version: str = KB_VERSION

    def body(self) -> Dict[str, Any]:
        return {"issues": self.issues}


def count_issues() -> Count:
    return Count(len(select_issues(only=(), skip=())))
'''

COMMAND_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://inductor-doctor.invalid/schemas/count.schema.json",
    "type": "object",
    "required": ["schema", "tool_version", "kb_version", "issues"],
    "properties": {"schema": {"const": "inductor-doctor/count/v1"}, "tool_version": {"type": "string"},
                   "kb_version": {"type": "string"}, "issues": {"type": "integer"}},
    "additionalProperties": False,
}

COMMAND_CLI = '''
@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="How many known issues there are.")
@format_option(("text", "json"))
@output_option()
def count(fmt: str, output: Optional[Path]) -> int:
    """How many known issues the doctor knows."""
    from inductor_doctor.commands.count import count_issues

    return deliver(count_issues(), fmt, output)

'''


def test_recipe_2_a_command_is_a_module_a_schema_a_renderer_and_a_click_command(copy: Path):
    package = copy / "inductor_doctor"
    (package / "commands" / "count.py").write_text(COMMAND_MODULE)
    (package / "schemas" / "count.schema.json").write_text(json.dumps(COMMAND_SCHEMA, indent=2))
    (package / "render" / "count_text.py").write_text(
        '"""`count` as text."""\n\n\ndef render(data, **_):\n'
        '    return f"{data[\'issues\']} known issues\\n"\n')
    init = (package / "render" / "__init__.py").read_text()
    (package / "render" / "__init__.py").write_text(
        init.replace('    ("list", "text"): "list_text",', '    ("list", "text"): "list_text",\n'
                     '    ("count", "text"): "count_text",'))
    cli = package / "cli.py"
    text = cli.read_text()
    marker = '@app.command(name="list"'
    cli.write_text(text.replace(marker, COMMAND_CLI.lstrip("\n") + marker, 1))

    shown = doctor(copy, ["count"], NO_COLOR="1")
    assert shown.returncode == 0, shown.stderr
    number = int(shown.stdout.split()[0])
    as_json = doctor(copy, ["count", "--format", "json"])
    data = json.loads(as_json.stdout)
    assert data["schema"] == "inductor-doctor/count/v1" and data["issues"] == number and number > 30
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, COMMAND_SCHEMA)
    env = doctor(copy, ["count"], INDUCTOR_DOCTOR_FORMAT="json")  # every option reads its variable
    assert json.loads(env.stdout)["issues"] == number
    assert "How many known issues" in doctor(copy, ["--help"]).stdout


def test_recipe_2_every_command_has_one_module_a_schema_and_a_renderer():
    """What recipe 2 asks of a command, checked for the ones that exist: one module in `commands/`,
    a schema for its document, and a text renderer (or, for `report`, its Markdown)."""
    commands = REPO / "inductor_doctor" / "commands"
    modules = {p.stem for p in commands.glob("*.py") if p.stem != "__init__"}
    cli = (REPO / "inductor_doctor" / "cli.py").read_text()
    for name in ("check", "probe", "plan", "suggest", "explain", "triage", "merge", "report", "fix", "run",
                 "why", "hook", "preflight"):
        assert name in modules, name
    # The command line reaches the commands through `commands/` alone.
    for old in ("check.command", "plan.command", "triage.command", "fleet.command", "inductor_doctor.gate",
                "inductor_doctor.explain "):
        assert old not in cli, old
    documents = {"check", "plan", "probe", "list", "explain", "triage", "merge", "report", "fix", "run",
                 "why", "hook", "suggest"}
    for command in documents:
        assert (SCHEMA_DIR / f"{command}.schema.json").is_file(), command
        assert any(c == command for c, _ in RENDERERS), command


def test_recipe_2_every_document_is_one_document_type():
    """Every command's document is a `Document` (core/document.py): its JSON is the one envelope and
    its body (no document writes its own `to_dict`, so no schema id is spelled by hand), no field of it
    hides the base's members, and its exit code is its own: `cli.deliver` switches on no command name."""
    import dataclasses
    import importlib

    from inductor_doctor.core.document import Document

    for module in sorted((REPO / "inductor_doctor").rglob("*.py")):
        rel = module.relative_to(REPO).with_suffix("")
        if rel.parts[1] in ("commands", "triage", "fleet", "report", "core") and rel.name != "__init__":
            importlib.import_module(".".join(rel.parts))

    def subclasses(cls: type) -> List[type]:
        return [c for s in cls.__subclasses__() for c in (s, *subclasses(s))]

    documents = [d for d in subclasses(Document) if d.__module__.startswith("inductor_doctor.")]
    named = set()
    for d in documents:
        assert "to_dict" not in vars(d), f"{d.__name__} writes its own envelope"
        own = {f.name: f.default for f in dataclasses.fields(d)}
        assert not set(own) & set(dir(Document)), f"{d.__name__} hides a member of Document"
        named.add(own.get("command", getattr(d, "command", None)))
    # `check`, `plan` and `probe` are `Report`s (ProbeDocument, PlanReport) that name theirs when made.
    assert {"list", "explain", "triage", "merge", "report", "fix", "run", "why", "hook", "suggest",
            "preflight"} <= named
    cli = (REPO / "inductor_doctor" / "cli.py").read_text()
    assert "document.command" not in cli and "def exit_code" not in cli


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

from inductor_doctor.probe.step import Step

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
