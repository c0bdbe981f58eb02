"""`explain --log FILE|- [--check] [--match sure|possible]`: a log's triage, and its confirming check.

The engine is `triage/engine.py` (read, match, judge, rank); this verb reads the log, offers the
`check --only` that confirms the diagnosis here and, with `--check`, runs it. Exit codes: 0 when
the log is diagnosed (a sure match; with `--match possible`, a "looks like" too), 1 when it is not,
2 when the input is unusable (missing, empty, binary).
"""

from __future__ import annotations

import time
from typing import Optional

from inductor_doctor.core.model import FailOn, exit_code_for
from inductor_doctor.triage.engine import EXACT, TriageResult, offer_check, triage_file
from inductor_doctor.triage.machine import decide_here


def triage(
    log: str, confirm: bool = False, python: Optional[str] = None, match_at: str = "sure"
) -> TriageResult:
    """`explain --log`: read, match, and offer (or, with `confirm`, run) the confirming check."""
    from inductor_doctor.kb import registry

    if python:
        from inductor_doctor.probe.target import resolve_python

        resolve_python(python)  # a bad --python is a usage error before any work
    start = time.perf_counter()
    result = triage_file(log, list(registry()))
    result.match_at = match_at
    result.check = offer_check(result, python)
    if confirm and result.check["available"]:
        from inductor_doctor.check import flow  # the check machinery loads only to confirm

        confirmed = flow.confirm([m.issue.id for m in result.matched], python)
        report = confirmed.report
        code = int(exit_code_for(report.findings, FailOn.AFFECTED)) if report is not None else None
        result.check.update(ran=confirmed.ran, exit_code=code, results=confirmed.results(),
                            error=confirmed.error)
    decide_here(result, EXACT)
    result.duration_s = time.perf_counter() - start
    return result

