"""The report block: one redacted Markdown block for a bug report (`report`, `run --report`,
`why --report`).

Maintainers ask every reporter for `python -m torch.utils.collect_env` and still lack what breaks a
compile: Triton and its ptxas, the compiler Inductor picks and whether it has OpenMP and Python.h,
the caches, the environment variables that steer them, and whether a known issue is at work. The
report holds all of it: collect_env itself (run by the diagnosed interpreter, every field it has),
the compile-stack facts of the probe, the verdicts of `check`, and with `--log` the triage of the
failing log. The CLI renders it redacted (secrets, user names) and bounded in size.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from inductor_doctor.check.flow import CheckRequest, run_check
from inductor_doctor.core.document import Document
from inductor_doctor.kb import KB_VERSION
from inductor_doctor.probe.target import resolve_python
from inductor_doctor.report.collect_env import CollectEnv, from_facts, run_collect_env
from inductor_doctor.triage.engine import offer_check, triage_file


@dataclass
class ReportDocument(Document):
    environment: Dict[str, Any]
    findings: List[Dict[str, Any]]
    collect_env: CollectEnv
    triage: Optional[Dict[str, Any]] = None
    meta: Dict[str, Any] = field(default_factory=dict)
    command: str = "report"
    kb_version: str = KB_VERSION

    def body(self) -> Dict[str, Any]:
        summary: Dict[str, int] = {}
        for f in self.findings:
            summary[f["status"]] = summary.get(f["status"], 0) + 1
        return {
            "environment": self.environment,
            "results": self.findings,
            "summary": summary,
            "collect_env": self.collect_env.to_dict(),
            "triage": self.triage,
            "meta": self.meta,
        }


def build_report(python: Optional[str] = None, log: Optional[str] = None, static: bool = False,
                 progress: Any = None) -> ReportDocument:
    """collect_env runs beside the check (both take seconds); the log is triaged last."""
    interpreter = resolve_python(python)
    triaged = None
    if log is not None:
        triaged = triage_file(log)  # streamed; an unreadable log is a usage error before any work
    box: Dict[str, CollectEnv] = {}
    worker = threading.Thread(target=lambda: box.update(env=run_collect_env(interpreter)), daemon=True)
    worker.start()
    report = run_check(CheckRequest(python=python, static=static), progress)
    worker.join()
    data = report.to_dict()
    collected = box.get("env") or CollectEnv("", error="collect_env did not finish")
    if not collected.fields:
        collected = from_facts(data["environment"], collected.error)
    triage = None
    if triaged is not None:
        triaged.check = offer_check(triaged, python)
        triage = triaged.to_dict()
    return ReportDocument(data["environment"], data["results"], collected, triage,
                          {"python": interpreter, "check": data.get("meta", {})})


def report_of(data: bytes) -> ReportDocument:
    """`run --report FILE`'s and `why --report FILE`'s document: the report block (static verdicts)
    with the triage of a failed program's output; the CLI renders it, redacted, into the file."""
    fd, log = tempfile.mkstemp(prefix="inductor-doctor-run-", suffix=".log")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return build_report(log=log, static=True)
    finally:
        os.unlink(log)
