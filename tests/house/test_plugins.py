"""Third-party known issues through the `inductor_doctor.issues` entry-point group.

The real thing: tests/plugin_fixture is pip-installed into a fresh venv that sees the torch and
inductor-doctor of the interpreter running the tests (its site-packages), and the CLI in that venv
must list it, explain it from its own page, run its own canary, and report its two broken entry
points without failing.
The registry's handling of misbehaving plugins is also tested in process, with fake entry points.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from conftest import REPO, run_cli, venv_seeing_this_python

from inductor_doctor import kb
from inductor_doctor.model import Canary, DeviceKind, KnownIssue, Severity

FIXTURE = REPO / "tests" / "plugin_fixture"
DIST = "indoc-plugin-fixture"
ISSUE_ID = "fixture-plugin-issue"


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory) -> Iterator[str]:
    """A fresh venv with the fixture installed; torch and the doctor come from the interpreter
    running the tests, through its own site-packages (a venv's, when the tests run in one)."""
    root = tmp_path_factory.mktemp("plugin")
    src = root / "src"
    shutil.copytree(FIXTURE, src)  # builds write into the source tree: keep the checkout clean
    python = venv_seeing_this_python(root / "venv")
    # No pip of its own: this interpreter's pip and setuptools (seen through its site-packages)
    # install into it, offline, where a venv's bundled setuptools would need the `wheel` package.
    proc = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    yield python
    shutil.rmtree(root, ignore_errors=True)


def _json(proc: subprocess.CompletedProcess) -> Any:
    assert proc.stdout.strip(), f"rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_list_shows_the_plugin_and_its_broken_entry_points(plugin_python):
    proc = run_cli(["list", "--format", "json"], python=plugin_python)
    assert proc.returncode == 0, proc.stderr
    doc = _json(proc)
    mine = [i for i in doc["issues"] if i["id"] == ISSUE_ID]
    assert len(mine) == 1 and mine[0]["source"] == DIST
    assert len(doc["issues"]) >= 21  # the built-ins are all still there
    errors = {e["entry_point"]: e["error"] for e in doc["plugin_errors"]}
    assert "broken on purpose" in errors["fixture-broken-import"]
    assert "gives a str, not a KnownIssue" in errors["fixture-wrong-type"]
    text = run_cli(["list"], python=plugin_python, env={"NO_COLOR": "1"})
    assert text.returncode == 0 and ISSUE_ID in text.stdout
    assert "plugin fixture-broken-import failed to load" in text.stdout + text.stderr


@pytest.mark.slow
def test_explain_shows_the_plugins_own_page(plugin_python):
    for query in (ISSUE_ID, "fixture-alias", "example-org/indoc-plugin-fixture#1"):
        proc = run_cli(["explain", query, "--full"], python=plugin_python, env={"NO_COLOR": "1"})
        assert proc.returncode == 0, (query, proc.stderr)
        assert "found through the absolute `docs_page`" in proc.stdout, query
        assert "unset INDOC_FIXTURE_BREAK" in proc.stdout
    doc = _json(run_cli(["explain", ISSUE_ID, "--format", "json"], python=plugin_python))
    assert "fixture failure" in doc["canary_source"] and doc["issue"]["source"] == DIST


@pytest.mark.slow
def test_check_runs_the_plugins_rule_and_canary(plugin_python):
    proc = run_cli(["check", "--only", ISSUE_ID, "--no-cache", "--format", "json"], python=plugin_python)
    report = _json(proc)
    assert proc.returncode == 0
    (finding,) = report["results"]
    assert (finding["status"], finding["basis"]) == ("ok", "canary"), finding
    assert {e["entry_point"] for e in report["meta"]["plugin_errors"]} >= {"fixture-broken-import"}
    broken = run_cli(["check", "--only", ISSUE_ID, "--no-cache", "--format", "json"], python=plugin_python,
                     env={"INDOC_FIXTURE_BREAK": "1"})
    (finding,) = _json(broken)["results"]
    assert broken.returncode == 1 and finding["status"] == "affected"
    assert "fixture failure" in finding["reason"]
    assert [w["command"] for w in finding["workarounds"]] == ["unset INDOC_FIXTURE_BREAK"]


def test_without_the_plugin_the_registry_has_no_plugin_issue():
    proc = run_cli(["list", "--format", "json"])
    assert ISSUE_ID not in {i["id"] for i in _json(proc)["issues"]}


# --- the registry against misbehaving plugins, in process --------------------------------------


class _EP:
    def __init__(self, name: str, obj: Any, dist: str = "fake-plugin") -> None:
        self.name, self.value, self._obj = name, f"fake_plugin:{name}", obj
        self.dist = type("Dist", (), {"name": dist})()

    def load(self) -> Any:
        if isinstance(self._obj, BaseException):
            raise self._obj
        return self._obj


class _EPs(list):
    def select(self, group: str) -> List[_EP]:
        return list(self) if group == kb.ENTRY_POINT_GROUP else []


def _issue(id_: str, **kw: Any) -> KnownIssue:
    return KnownIssue(id=id_, title="t", severity=Severity.ERROR, devices=(DeviceKind.CPU,),
                      upstream=kw.pop("upstream", (f"example/x#{len(id_)}",)), summary="s", **kw)


@pytest.fixture
def fake_plugins(monkeypatch):
    """Install fake entry points and give a fresh registry; the cached one is restored after."""
    import importlib.metadata

    def install(*eps: _EP) -> kb.Registry:
        monkeypatch.setattr(importlib.metadata, "entry_points", lambda: _EPs(eps))
        monkeypatch.setattr(kb, "_may_have_plugins", lambda: True)  # the fakes have no dist-info
        kb.registry.cache_clear()
        return kb.registry()

    yield install
    kb.registry.cache_clear()


def test_the_quick_look_for_plugins_finds_a_real_one(tmp_path, monkeypatch):
    """Before the full entry-point scan, a look at the entry_points.txt files: none, then one."""
    from fault_canaries.plugin import install

    kb.registry.cache_clear()
    assert kb._may_have_plugins() is False, "a plugin of this group is installed on this machine"
    monkeypatch.syspath_prepend(str(install(tmp_path)))
    assert kb._may_have_plugins() is True


def test_plugin_that_exits_at_import_is_not_fatal(fake_plugins):
    reg = fake_plugins(_EP("exits", SystemExit(3)), _EP("good", _issue("good-one")))
    assert reg.find("good-one") is not None and reg.find("good-one").source == "fake-plugin"
    assert [n for n, _ in reg.plugin_errors] == ["exits"]


def test_plugin_issue_with_a_bad_ref_is_reported_not_raised(fake_plugins):
    reg = fake_plugins(_EP("bad-ref", _issue("bad-ref-one", upstream=("pytorch#1", 5))))
    assert reg.find("bad-ref-one") is None
    assert reg.plugin_errors and reg.plugin_errors[0][0] == "bad-ref-one"
    assert len(reg) == len(kb._builtin_issues())


def test_plugin_paths_must_be_absolute(fake_plugins):
    """A relative canary would resolve among the built-in canaries and run one of those."""
    relative = _issue("rel-canary", canary=Canary("cxx_compiler_missing.py", devices=(DeviceKind.CPU,)))
    reg = fake_plugins(_EP("rel", relative), _EP("page", _issue("rel-page", docs_page="page.md")))
    assert reg.find("rel-canary") is None and reg.find("rel-page") is None
    assert {n for n, _ in reg.plugin_errors} == {"rel", "page"}


def test_an_entry_point_registers_all_of_its_issues_or_none(fake_plugins):
    reg = fake_plugins(_EP("mixed", lambda: [_issue("mixed-ok"), "not an issue"]))
    assert reg.find("mixed-ok") is None and reg.plugin_errors[0][0] == "mixed"


def test_a_plugin_cannot_replace_a_builtin(fake_plugins):
    reg = fake_plugins(_EP("shadow", _issue("triton-missing")))
    assert reg.find("triton-missing").source == "builtin"
    assert "duplicate" in reg.plugin_errors[0][1]


def test_fixture_package_itself_is_well_formed():
    """The fixture's working issue satisfies what the built-ins do: an absolute page and canary."""
    sys.path.insert(0, str(FIXTURE))
    try:
        import indoc_plugin_fixture as fx
    finally:
        sys.path.remove(str(FIXTURE))
    issue = fx.issues()[0]
    assert Path(issue.docs_page).is_file() and Path(issue.canary.script).is_file()
    assert issue.signatures[0].search("RuntimeError: fixture failure: the environment says so")
