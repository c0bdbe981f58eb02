"""A log plus this machine: what the issue's check here decides of a match the log alone cannot.

A bare "version `GLIBCXX_3.4.32' not found", with nothing naming a compiled module, Inductor or
Triton around it, is libstdcxx-too-old or another program's error; a bare missing `Python.h` is
Inductor's or any build's. The log cannot tell, so triage says "possibly X", naming the one fact of a
machine that decides (`Signature.decided_by`). With `explain --log --check` the issue's check runs
here (its static rule, its canary where it has one) and decides, on the assumption `--check` makes
everywhere, that the log comes from this machine:

* `affected`: this machine has the issue, so the log's error is it: "this is X", sure;
* `likely` (a prediction from versions): "this looks like X", with the check's reason;
* `ok` or `not-applicable` everywhere: not X here; the match goes, and the check's lines say why;
* anything else (inconclusive, the check could not run): still "possibly X".
"""

from __future__ import annotations

from typing import Any, Dict, List

POSSIBLE = "possible"
PARTIAL = "partial"
CLEAN = ("ok", "not-applicable")


def decide_here(result: Any, exact: str) -> None:
    """Decide each possible match of `result` (a `TriageResult`) by the check run here (`result.check`,
    as `offer_check` filled it); `exact` is the sure confidence's name. Nothing changes when the
    check did not run."""
    check: Dict[str, Any] = result.check or {}
    if not check.get("ran"):
        return
    findings: Dict[str, List[Dict[str, Any]]] = {}
    for f in check.get("results", []):
        findings.setdefault(f["id"], []).append(f)
    kept = []
    for m in result.matches:
        found = findings.get(m.issue.id, [])
        if m.confidence != POSSIBLE or not found:
            kept.append(m)
            continue
        statuses = {f["status"] for f in found}
        if "affected" in statuses:
            first = next(f for f in found if f["status"] == "affected")
            m.confidence, m.score = exact, m.score + 80
            m.because = []
            m.note = (f"decided on this machine: {first['id']} is affected on {first['device']} "
                      f"({first['reason']})")
        elif "likely" in statuses:
            first = next(f for f in found if f["status"] == "likely")
            m.confidence, m.score = PARTIAL, m.score + 20
            m.because = [f"this machine's check predicts it (likely on {first['device']}): {first['reason']}"]
        elif statuses <= set(CLEAN):
            continue  # not this issue here: the check's lines say so
        kept.append(m)
    if any(m.confidence == exact for m in kept):
        kept = [m for m in kept if m.confidence == exact]
    kept.sort(key=lambda m: (-m.score, m.issue.id))
    result.matches = kept
