"""Unit tests of the knowledge base itself: one issue, one module, one page; the registry's rules."""

from __future__ import annotations

import json
import re

import pytest

from inductor_doctor.core.model import DeviceKind, KnownIssue, Severity
from inductor_doctor.kb import DuplicateIssueError, Registry, docs_dir, docs_page, normalize_ref, registry
from inductor_doctor.target import CANARY_DIR, canary_path

ISSUES = list(registry())


def test_registry_loads_builtin_issues_without_plugin_errors():
    assert len(ISSUES) >= 5
    assert registry().plugin_errors == []


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
    assert issue.signatures, "an issue has error signatures for canaries and triage"
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


def test_the_shipped_index_matches_the_modules():
    """`list` and `explain` read kb/_data/index.json instead of importing every module: it must say
    what the modules say."""
    from inductor_doctor.kb import _index

    assert _index.load() == json.loads(json.dumps(_index.build())), (
        f"kb/_data/index.json is stale: run `{_index.REGENERATE}`")
