"""Two small things a user reads and acts on: the hint for an unknown issue, the last line's count.

* Before, `explain 151589` was "unknown issue '151589'; see `inductor-doctor list`", though
  pytorch/pytorch#151589 is an issue's upstream ref: a bare number is now matched against the refs'
  numbers, and the hint names each as it is typed (`pytorch#151589`, `triton#11512`).
* Before, the last line said "(of 3 canaries; the other 1 could not decide its check here)" above a
  matrix with 0 inconclusive: that canary left its check to the static rule, which decided it. The
  line is printed only when nothing is inconclusive, so it never says a canary could not decide.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from click.testing import CliRunner

from inductor_doctor import cli
from inductor_doctor.render.check_text import render

#: (what is typed, the hint it gets)
NUMBERS = [
    (["explain", "151589"], "did you mean pytorch#151589?"),
    (["explain", "#151589"], "did you mean pytorch#151589?"),
    (["explain", "11512"], "did you mean triton#11512?"),
    (["check", "--static", "--only", "95708"], "did you mean pytorch#95708?"),
]


def invoke(args: List[str]) -> Any:
    return CliRunner().invoke(cli.app, args, standalone_mode=False)


@pytest.mark.parametrize("args,hint", NUMBERS)
def test_a_bare_number_names_the_upstream_refs_it_is_the_number_of(args: List[str], hint: str) -> None:
    result = invoke(args)
    assert result.exception is not None and hint in str(result.exception), result.exception
    ref = hint.split("did you mean ", 1)[1].rstrip("?")
    shown = invoke(["explain", ref])
    assert shown.exception is None and shown.return_value == 0, "the hint is an issue `explain` takes"


def test_a_number_no_ref_has_gets_no_made_up_hint() -> None:
    result = invoke(["explain", "99999999"])
    assert "did you mean" not in str(result.exception) and "inductor-doctor list" in str(result.exception)


def _check(rows: List[Dict[str, Any]], canaries: int) -> str:
    data = {"schema": "inductor-doctor/check/v1", "tool_version": "0", "kb_version": "0",
            "environment": {}, "results": [dict(title="t", reason="r", severity="error", workarounds=[],
                                                upstream=[], device="cpu", **r) for r in rows],
            "summary": {}, "meta": {"canaries_run": canaries, "canaries_cached": 0}}
    return " ".join(render(data, width=200).split())


def test_a_canary_that_left_its_check_to_the_rule_is_said_so_never_could_not_decide() -> None:
    rows = [{"id": "a", "status": "ok", "basis": "canary"}, {"id": "b", "status": "ok", "basis": "canary"},
            {"id": "c", "status": "ok", "basis": "static"}]
    said = _check(rows, canaries=3)
    assert "0 inconclusive" in said and "could not decide" not in said
    assert ("3 checks ok: 1 by a static rule, 2 by their canary (3 canaries ran: 2 decided their check, the "
            "other 1 left its check to its static rule).") in said


def test_a_canary_that_said_its_issue_cannot_arise_decided_its_check() -> None:
    rows = [{"id": "a", "status": "ok", "basis": "canary"}, {"id": "b", "status": "ok", "basis": "static"},
            {"id": "c", "status": "not-applicable", "basis": "canary"}]
    said = _check(rows, canaries=2)
    assert "2 checks ok: 1 by a static rule, 1 by its canary." in said, said
    assert "canaries ran" not in said and "could not decide" not in said
