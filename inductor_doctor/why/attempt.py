"""One run of the command under one variation: its own process group, a timeout, killed whole.

The output (stdout and stderr together, in order) goes to a file in the doctor's temporary
directory, never through the doctor's memory; what the comparison and the triage need is read back
bounded (`Capture`: head, the lines that matter, tail). The run's own Inductor and Triton caches
live in that directory too, so no re-run writes into the user's caches.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.probe._proc import run
from inductor_doctor.run.capture import Capture
from inductor_doctor.why.signature import Signature, read


@dataclass
class Attempt:
    """How one run ended."""

    returncode: Optional[int]  # None: timed out (and killed)
    duration_s: float
    output: bytes  # what was kept of it (bounded)
    output_bytes: int
    compile_calls: Optional[int] = None  # torch.compile calls counted by the step-down wrapper
    error: Optional[str] = None  # could not start it
    extra: Dict[str, str] = field(default_factory=dict)  # the files of Launch.extra, read back

    @property
    def passed(self) -> bool:
        return self.returncode == 0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None and self.error is None

    def signature(self, scrub: Sequence[str] = ()) -> Signature:
        """The failure, as runs are compared (`why/signature.py`)."""
        return read(self.output, self.returncode, scrub)

    def fingerprint(self, scrub: Sequence[str] = ()) -> str:
        return self.signature(scrub).line

    def to_dict(self, scrub: Sequence[str] = ()) -> Dict[str, Any]:
        sig = self.signature(scrub)
        return {
            "exit_code": self.returncode,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 2),
            "error_line": sig.line if not self.passed else None,
            "stage": sig.stage if not self.passed else None,
            "output_bytes": self.output_bytes,
            "compile_calls": self.compile_calls,
            "error": self.error,
        }


@dataclass
class Launch:
    """What one run is: the command, the environment changes, where its files go, its time limit."""

    argv: List[str]
    env: Dict[str, str]
    workdir: str
    timeout_s: float
    mark: Optional[str] = None
    extra: Dict[str, str] = field(default_factory=dict)  # name: a file the run writes, read back
    cwd: Optional[str] = None  # None: the doctor's own (the user's) working directory


def run_attempt(launch: Launch, cancelled: Any = None) -> Attempt:
    """Run it in its own session (`probe/_proc.run`, output to a file); on timeout or cancellation,
    and when it ends, the whole group is killed."""
    log = os.path.join(launch.workdir, "output.log")
    start = time.monotonic()
    with open(log, "wb") as out:
        done = run(launch.argv, timeout_s=launch.timeout_s, env=launch.env, cancel=cancelled, output=out,
                   cwd=launch.cwd)
    if done.returncode is None and done.error and done.error != "cancelled":
        return Attempt(None, 0.0, b"", 0, error=f"could not start: {done.strerror or done.error}")
    stopped = "stopped: another variation decided" if done.error == "cancelled" else None
    duration = time.monotonic() - start
    capture = Capture()
    with open(log, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            capture.feed(chunk)
    calls = None
    if launch.mark and os.path.exists(launch.mark):
        with open(launch.mark, "rb") as fh:
            calls = fh.read().count(b"\n")
    elif launch.mark:
        calls = 0
    extra = {}
    for name, path in launch.extra.items():
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                extra[name] = fh.read(1 << 20)
        except OSError:
            continue
    return Attempt(done.returncode, duration, capture.data(), capture.total, calls, error=stopped,
                   extra=extra)


