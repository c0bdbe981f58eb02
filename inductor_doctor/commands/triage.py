"""`explain --log FILE|- [--check] [--match sure|possible]`: a log's triage, and its confirming check.

The engine is `triage/engine.py` (read, match, judge, rank); this verb reads the log, offers the
`check --only` that confirms the diagnosis here and, with `--check`, runs it. Exit codes: 0 when
the log is diagnosed (a sure match; with `--match possible`, a "looks like" too), 1 when it is not,
2 when the input is unusable (missing, empty, binary).
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence

from inductor_doctor.core.model import UsageError
from inductor_doctor.triage.engine import TriageResult, offer_check, triage_file


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
        result.check.update(_run_check([m.issue.id for m in result.matched], python))
    result.duration_s = time.perf_counter() - start
    return result


def _run_check(ids: Sequence[str], python: Optional[str]) -> Dict[str, Any]:
    """The confirming check, in this process: its canaries are subprocesses like any check's, so an
    interrupt stops them all and nothing is orphaned."""
    from inductor_doctor.commands.check import CheckRequest, run_check
    from inductor_doctor.core.model import FailOn, exit_code_for

    try:
        report = run_check(CheckRequest(python=python, only=list(ids)))
    except UsageError as exc:
        return {"ran": False, "exit_code": None, "results": [], "error": str(exc)}
    return {"ran": True, "exit_code": int(exit_code_for(report.findings, FailOn.AFFECTED)),
            "results": [f.to_dict() for f in report.findings], "error": None}
