"""`inductor-doctor report [--log FILE]`: one redacted Markdown block for a bug report.

Maintainers ask every reporter for `python -m torch.utils.collect_env` and still lack what breaks a
compile. The block (`report/block.py`) holds collect_env itself, the compile-stack facts, the
verdicts of `check`, and with `--log` the failing log's triage; the CLI renders it redacted.
"""

from __future__ import annotations

from typing import Any, Optional

from inductor_doctor.report.block import ReportDocument, build_report


def report(python: Optional[str] = None, log: Optional[str] = None, static: bool = False,
           progress: Any = None) -> ReportDocument:
    """`report`'s document: collect_env beside the check, and the log's triage."""
    return build_report(python=python, log=log, static=static, progress=progress)
