"""Unit tests of the knowledge base itself: one issue, one data file (and its code), one page; the
registry's rules; the data files' own."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from inductor_doctor.core import model
from inductor_doctor.core.model import Canary, DeviceKind, KnownIssue, Severity, Signature, Workaround
from inductor_doctor.kb import (
    DuplicateIssueError,
    Registry,
    _issue_files,
    docs_dir,
    docs_page,
    normalize_ref,
    registry,
)
from inductor_doctor.target import CANARY_DIR, canary_path

ISSUES = list(registry())


def test_registry_loads_builtin_issues_without_plugin_errors():
    assert len(ISSUES) >= 5
    assert registry().plugin_errors == []


#: Issues with no error text of their own, and why; every other issue has signatures.
NO_WORDS_OF_ITS_OWN = {
    "platform-not-covered": "a headline about the checks themselves (which rows a platform leaves "
                            "unchecked), not a failure",
    "compile-workers-oversubscribed": "the node is OOM-killed or slow; the kernel's and torchrun's lines "
                                      "are any host OOM's, and no upstream report posted more "
                                      "(pytorch/FBGEMM#5930: the log cuts off mid-test with no error)",
}


@pytest.mark.parametrize("issue", ISSUES, ids=lambda i: i.id)
def test_issue_is_complete(issue: KnownIssue):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", issue.id)
    assert issue.title and issue.summary
    assert issue.devices, "an issue concerns at least one device kind"
    assert issue.upstream, "every issue cites its upstream threads"
    for ref in issue.upstream:
        assert normalize_ref(ref), f"{ref!r} is not owner/repo#N"
    assert issue.workarounds or issue.severity is Severity.WARNING, "an error comes with a workaround"
    assert issue.rule is not None or issue.canary is not None, "an issue is detected somehow"
    assert issue.signatures or issue.id in NO_WORDS_OF_ITS_OWN, \
        "an issue has error signatures for canaries and triage"
    for sig in issue.signatures:
        sig.compiled()
    if issue.canary is not None:
        path = canary_path(issue.canary.script)
        assert path.is_file(), f"canary {path} exists"
        source = path.read_text()
        assert "inductor_doctor" not in source, "canaries run without the doctor installed"
        compile(source, str(path), "exec")


@pytest.mark.parametrize("issue", ISSUES, ids=lambda i: i.id)
def test_issue_has_its_docs_page(issue: KnownIssue):
    page = docs_page(issue)
    assert page.is_file(), f"{page} missing"
    text = page.read_text()
    assert text.startswith("# "), "a page starts with its title"
    for ref in issue.upstream:
        number = ref.split("#")[1]
        assert number in text, f"the page cites {ref}"


def test_every_page_has_its_issue():
    ids = {i.id for i in ISSUES if i.source == "builtin"}
    pages = {p.stem for p in docs_dir().glob("*.md")}
    assert pages == ids, f"pages without issue: {pages - ids}; issues without page: {ids - pages}"


def test_every_canary_script_belongs_to_an_issue():
    used = {i.canary.script for i in ISSUES if i.canary}
    scripts = {p.name for p in CANARY_DIR.glob("*.py") if not p.name.startswith("_")}
    assert scripts <= used, f"orphan canaries: {scripts - used}"


def _issue(id_: str, refs=(), aliases=()) -> KnownIssue:
    return KnownIssue(id=id_, title="t", severity=Severity.ERROR, devices=(DeviceKind.CPU,),
                      upstream=tuple(refs), summary="s", aliases=tuple(aliases))


def test_registry_refuses_duplicates():
    reg = Registry([_issue("a-b", ["pytorch/pytorch#1"], ["ab"])])
    with pytest.raises(DuplicateIssueError):
        reg.add(_issue("a-b"))
    with pytest.raises(DuplicateIssueError):
        reg.add(_issue("c-d", aliases=["ab"]))
    with pytest.raises(DuplicateIssueError):
        reg.add(_issue("e-f", refs=["pytorch#1"]))


@pytest.mark.parametrize(
    "ref,norm",
    [("pytorch#1", "pytorch/pytorch#1"), ("pytorch/pytorch#1", "pytorch/pytorch#1"),
     ("xla#8464", "pytorch/xla#8464"), ("fla#160", "fla-org/flash-linear-attention#160"),
     ("https://github.com/pytorch/pytorch/pull/151859", "pytorch/pytorch#151859"),
     ("City96/ComfyUI-GGUF#257", "city96/comfyui-gguf#257"), ("not a ref", None)],
)
def test_normalize_ref(ref, norm):
    assert normalize_ref(ref) == norm


def test_list_and_explain_see_what_the_registry_builds():
    """`list` and `explain` read the data files without the modules: they must say what the
    `KnownIssue` objects of every other command say, in the same order, keys and all."""
    built = [json.loads(json.dumps(i.to_dict(), sort_keys=True)) for i in ISSUES if i.source == "builtin"]
    assert json.dumps(_issue_files.entries()) == json.dumps(built)


def test_every_issue_module_has_its_data_file():
    """An issue is `kb/<id_with_underscores>.toml` (its data) and, where it has code, the module of
    that name: a module with a `rule` but no data file would never be checked."""
    kb = Path(_issue_files.HERE)
    modules = {p.stem for p in kb.glob("*.py") if not p.name.startswith("_")}
    data = {p.stem for p in _issue_files.paths()}
    assert modules <= data, f"issue modules without a data file: {modules - data}"
    assert {i.id.replace("-", "_") for i in ISSUES if i.source == "builtin"} == data


@pytest.mark.parametrize("kind,keys", [
    (KnownIssue, _issue_files.ISSUE_KEYS), (Signature, _issue_files.SIGNATURE_KEYS),
    (Workaround, _issue_files.WORKAROUND_KEYS), (Canary, _issue_files.CANARY_KEYS),
    (model.CrossCanary, _issue_files.CROSS_KEYS),
], ids=lambda x: getattr(x, "__name__", ""))
def test_a_data_file_may_hold_every_field_that_is_data(kind, keys):
    """The keys a data file may hold are the type's fields, less its code (rule, advise, predict,
    judge_artifact, annotate) and where it came from (source): a field added to the vocabulary is a key
    the loader knows."""
    code = {"rule", "advise", "predict", "judge_artifact", "annotate", "source"}
    assert set(keys) == {f.name for f in fields(kind)} - code


def _write(tmp_path: Path, text: str, name: str = "new_issue") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


MINIMAL = """id = "new-issue"
title = "t"
upstream = ["pytorch/pytorch#1"]
severity = "error"
devices = ["cpu"]
summary = "s"
"""


@pytest.mark.parametrize("extra,says", [
    ('titel = "x"\n', "unknown key titel"),
    ('aliases = "x"\n', "aliases is a str, not a list"),
    ('\n[[signatures]]\npatern = "x"\n', "unknown key signatures[0].patern"),
    ('\n[[workarounds]]\ncommand = "x"\n', "workarounds[0].text is missing"),
    ('\n[canary]\nscript = "x.py"\ndevices = ["cpu"]\ntimeout = 3\n', "unknown key canary.timeout"),
    ('[x\n', "new_issue.toml: "),
])
def test_a_mistake_in_a_data_file_names_the_file_and_the_key(tmp_path, extra, says):
    with pytest.raises(_issue_files.IssueFileError, match=re.escape(says)):
        _issue_files.read(_write(tmp_path, MINIMAL + extra))


def test_a_data_file_is_named_after_its_issue(tmp_path):
    with pytest.raises(_issue_files.IssueFileError, match="belongs in new_issue.toml"):
        _issue_files.read(_write(tmp_path, MINIMAL, name="other"))


def test_a_data_file_with_every_field_builds_the_issue_it_says(tmp_path):
    """Every key of a data file reaches the `KnownIssue`: regexes as written (TOML literal strings),
    flags by name, the canary's settings, the workarounds' releases."""
    from inductor_doctor.kb._builtin import build

    text = MINIMAL.replace('summary = "s"', """aliases = ["ni"]
affected = { torch = ">=2.5,<2.7" }
fixed = { torch = "2.7.0" }
headline = true
summary = \"\"\"\\
  one \\
  line\"\"\"

[[signatures]]
pattern = '\\bfoo\\(\\d+\\)'
strength = "partial"
note = "n"
flags = ["MULTILINE"]
unless = 'u'
log_context = ["ctx"]
anchor = 'a'
anchor_says = "as"
anchor_lines = 2
against = 'g'
against_says = "gs"
ranged = false
subject = ["triton-kernel"]
fact = "gpu-arch-missing"

[[workarounds]]
text = "do it"
command = "export X=1"
kind = "env"
applies = { torch = "<2.7" }

[canary]
script = "new_issue.py"
devices = ["cpu", "cuda"]
needs = ["torch", "triton"]
timeout_s = 30
env = { X = "1" }
deep = true
affected_exit_signals = [6]
""")
    issue = build(_issue_files.read(_write(tmp_path, text)))
    assert issue == KnownIssue(
        id="new-issue", title="t", severity=Severity.ERROR, devices=(DeviceKind.CPU,),
        upstream=("pytorch/pytorch#1",), summary="one line", aliases=("ni",),
        affected={"torch": ">=2.5,<2.7"}, fixed={"torch": "2.7.0"}, headline=True,
        signatures=(Signature(r"\bfoo\(\d+\)", strength="partial", note="n", flags=re.MULTILINE, unless="u",
                              log_context=("ctx",), anchor="a", anchor_says="as", anchor_lines=2,
                              against="g", against_says="gs", ranged=False, subject=("triton-kernel",),
                              fact="gpu-arch-missing"),),
        workarounds=(Workaround("do it", "export X=1", "env", {"torch": "<2.7"}),),
        canary=Canary("new_issue.py", (DeviceKind.CPU, DeviceKind.CUDA), needs=("torch", "triton"),
                      timeout_s=30.0, env={"X": "1"}, deep=True, affected_exit_signals=(6,)),
    )


def test_list_and_explain_import_neither_the_issue_modules_nor_the_vocabulary():
    """What keeps them fast: the data files alone, no module per issue, no `core/model.py`."""
    code = (
        "import sys\n"
        "from inductor_doctor.commands.explain import issue_list, issue_page\n"
        "issue_list(); issue_page('openmp-headers-missing'); issue_page('omp-h')\n"
        "print(sorted(m for m in sys.modules if m.startswith('inductor_doctor.kb.') and '._' not in m"
        " or m == 'inductor_doctor.core.model'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
