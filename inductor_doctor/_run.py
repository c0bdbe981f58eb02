"""`inductor-doctor run`'s own front door: no click, no knowledge base until the command has failed.

`run` wraps a user's command, so its start-up is paid on every run of it, and the click command line
costs tens of milliseconds to import. The console script therefore reads `run`'s few options here
first (`_entry.py`), in the same words as click, and leaves `--help` and anything unusual to the click
command. Both call `execute`; only after a failure is the CLI (and its renderers) imported to print
the diagnosis. Whatever the doctor does, the exit status is the command's own, as the contract says.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # no `typing` on the wrapped command's path (milliseconds a run)
if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Any, List, Optional, Sequence, Tuple

    from inductor_doctor.run.process import Completed


class RunRequest:
    """What `run` was asked (a plain class: no `dataclasses` import on the wrapped command's path)."""

    def __init__(self, cmd: List[str], report: Optional[str] = None, timeout_s: Optional[float] = None,
                 output: Optional[str] = None, check: bool = True) -> None:
        self.cmd = cmd
        self.report = report
        self.timeout_s = timeout_s
        self.output = output
        self.check = check


def parse_fast(args: Sequence[str]) -> Optional[RunRequest]:
    """`run`'s options read by hand; None hands anything unusual (--help, a bad value) to click."""
    request = RunRequest([], report=os.environ.get("INDUCTOR_DOCTOR_REPORT") or None)
    timeout = os.environ.get("INDUCTOR_DOCTOR_TIMEOUT") or None
    rest = list(args)
    while rest:
        head = rest[0]
        if head == "--":
            rest.pop(0)
            break
        if not head.startswith("-"):
            break
        name, eq, value = head.partition("=")
        if name in ("--report", "--timeout", "--output", "-o"):
            if not eq:
                if len(rest) < 2:
                    return None
                value = rest.pop(1)
            rest.pop(0)
            if name == "--report":
                request.report = value
            elif name in ("--output", "-o"):
                request.output = value
            else:
                timeout = value
        elif head == "--no-check":
            request.check = False
            rest.pop(0)
        else:
            return None  # --help and anything unknown: click says it in its words
    if not rest:
        return None
    if timeout is not None:
        try:
            request.timeout_s = float(timeout)
        except ValueError:
            return None
        if not request.timeout_s >= 1:
            return None
    request.cmd = rest
    return request


def execute(request: RunRequest) -> Tuple[Completed, Any, Optional[str]]:
    """Run it; on a failure of its own, diagnose it. Returns how it ended, the diagnosis (None when
    there is nothing to say) and the doctor's own trouble in one line, which never changes the
    command's exit status."""
    from inductor_doctor.run.process import needs_diagnosis, run_passthrough

    completed = run_passthrough(request.cmd)
    if not needs_diagnosis(completed):
        return completed, None, None
    from inductor_doctor.commands.run import diagnose

    try:
        document = diagnose(completed, timeout_s=request.timeout_s, report=request.report,
                            confirm=request.check)
    except KeyboardInterrupt:
        return completed, None, "diagnosis interrupted"
    except Exception as exc:  # noqa: BLE001 - the command's status is what matters here
        if os.environ.get("INDUCTOR_DOCTOR_DEBUG"):
            raise
        return completed, None, (f"could not diagnose the failure ({type(exc).__name__}: {exc}); this is a "
                                 "bug in inductor-doctor, please report it")
    return completed, document, None
