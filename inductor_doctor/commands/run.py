"""`inductor-doctor run -- CMD ...`: the command, unchanged; on failure, the diagnosis after it.

While the command succeeds the doctor adds nothing: not a byte on stdout or stderr, not a changed
exit status. When it fails, the doctor reads what the command wrote to stderr (bounded: see
`run/capture.py`), triages it against the known issues, runs the matched issues' checks here
(their canaries, each bounded by `--timeout`), and returns a `RunDocument` that the CLI prints to
stderr after the program's own output. A failure no known issue explains is said so, with the
`why` command that re-runs it under controlled variations.

A command ended by a signal the doctor forwarded (the user's Ctrl-C, a scheduler's SIGTERM) is not
diagnosed: that is not a failure of the program.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from inductor_doctor.core.document import Document
from inductor_doctor.kb import KB_VERSION
from inductor_doctor.run.process import Completed


@dataclass
class RunDocument(Document):
    """A failed command's diagnosis: how it ended, the triage of its output, the checks run here."""

    argv: List[str]
    returncode: int  # the command's own exit status (its JSON's `exit_code`)
    signal: Optional[int]
    duration_s: float
    captured_bytes: int
    output_bytes: int
    triage: Dict[str, Any]
    check: Dict[str, Any] = field(default_factory=dict)
    report: Optional[str] = None  # the file --report wrote
    diagnosis_s: float = 0.0
    report_document: Any = None  # what --report FILE gets (the CLI renders it)
    command: str = "run"
    kb_version: str = KB_VERSION

    def body(self) -> Dict[str, Any]:
        return {
            "command_line": shlex.join(self.argv),
            "exit_code": self.returncode,
            "signal": self.signal,
            "duration_s": round(self.duration_s, 3),
            "output": {"stderr_bytes": self.output_bytes, "kept_bytes": self.captured_bytes},
            "triage": self.triage,
            "check": self.check,
            "why": "inductor-doctor why -- " + shlex.join(self.argv),
            "report": self.report,
            "meta": {"diagnosis_s": round(self.diagnosis_s, 3)},
        }


def diagnose(completed: Completed, timeout_s: Optional[float] = None, report: Optional[str] = None,
             confirm: bool = True) -> RunDocument:
    """The triage of what the failed command wrote, and the matched issues' checks run here now."""
    from inductor_doctor.triage.diagnosis import matched_ids, summary, triage_output

    start = time.perf_counter()
    data = completed.capture.data()
    result = triage_output(data, "stderr of " + shlex.join(completed.argv)[:200])
    ids = matched_ids(result)
    check: Dict[str, Any] = {"ran": False, "results": [], "error": None}
    if confirm and ids:
        from inductor_doctor.check import flow  # the check machinery loads only to confirm

        confirmed = flow.confirm(ids, timeout_s=timeout_s, remember=False)
        check = {"ran": confirmed.ran, "results": confirmed.results(), "error": confirmed.error}
    document = RunDocument(completed.argv, completed.exit_code, completed.signal, completed.duration_s,
                           len(data), completed.capture.total, summary(result), check, report,
                           time.perf_counter() - start)
    if report:
        from inductor_doctor.report.block import report_of

        document.report_document = report_of(data)
    return document
