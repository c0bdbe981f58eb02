"""A third-party plugin: one known issue with its own page and canary, found by absolute path.

The module imports only inductor_doctor's vocabulary (never torch), as a plugin must: the doctor
loads every plugin to answer even `list` and `--help`.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from inductor_doctor.core.model import (
    Basis,
    Canary,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

HERE = Path(__file__).resolve().parent


def rule(facts) -> List[RuleOutcome]:
    version = facts.torch.version if facts.torch is not None else None
    if not version:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not installed", Basis.STATIC)]
    return [RuleOutcome(Status.OK, f"the fixture's rule saw torch {version}", Basis.VERSION)]


ISSUE = KnownIssue(
    id="fixture-plugin-issue",
    title="Fixture plugin issue: the canary fails when INDOC_FIXTURE_BREAK=1",
    severity=Severity.ERROR,
    devices=(DeviceKind.TOOLCHAIN,),
    upstream=("example-org/indoc-plugin-fixture#1",),
    aliases=("fixture-alias",),
    summary="A known issue shipped by a third-party package through the inductor_doctor.issues entry "
            "point.",
    signatures=(Signature(r"fixture failure: the environment says so"),),
    workarounds=(
        Workaround("Unset the variable that breaks the fixture", "unset INDOC_FIXTURE_BREAK", "env"),
    ),
    rule=rule,
    canary=Canary(str(HERE / "fixture_canary.py"), devices=(DeviceKind.TOOLCHAIN,), needs=(), timeout_s=60.0),
    docs_page=str(HERE / "fixture-plugin-issue.md"),
)


def issues() -> List[KnownIssue]:
    """The entry point: a callable returning the plugin's issues."""
    return [ISSUE]


not_an_issue = "this entry point names a string, not a KnownIssue"
