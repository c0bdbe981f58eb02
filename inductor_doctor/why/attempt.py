"""One run of the command under one variation: its own process group, a timeout, killed whole.

The output (stdout and stderr together, in order) goes to a file in the doctor's temporary
directory, never through the doctor's memory; what the comparison and the triage need is read back
bounded (`Capture`: head, the lines that matter, tail). The run's own Inductor and Triton caches
live in that directory too, so no re-run writes into the user's caches.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.probe._proc import run
from inductor_doctor.run.capture import Capture

#: The last line that names an exception (`ValueError: ...`, `torch._inductor.exc.InductorError: ...`).
_EXC_LINE = re.compile(rb"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Warning)[\w.]*)(?::.*)?$",
                       re.M)
_HEX = re.compile(rb"0x[0-9a-fA-F]+")


@dataclass
class Attempt:
    """How one run ended."""

    returncode: Optional[int]  # None: timed out (and killed)
    duration_s: float
    output: bytes  # what was kept of it (bounded)
    output_bytes: int
    compile_calls: Optional[int] = None  # torch.compile calls counted by the step-down wrapper
    error: Optional[str] = None  # could not start it

    @property
    def passed(self) -> bool:
        return self.returncode == 0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None and self.error is None

    def fingerprint(self, scrub: Sequence[str] = ()) -> str:
        return fingerprint(self.output, scrub)

    def to_dict(self, scrub: Sequence[str] = ()) -> Dict[str, Any]:
        return {
            "exit_code": self.returncode,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 2),
            "error_line": self.fingerprint(scrub) if not self.passed else None,
            "output_bytes": self.output_bytes,
            "compile_calls": self.compile_calls,
            "error": self.error,
        }


def fingerprint(output: bytes, scrub: Sequence[str] = ()) -> str:
    """The failure in one line: the last exception line, else the last line; temporary paths and
    addresses scrubbed so two runs of the same failure compare equal."""
    found = list(_EXC_LINE.finditer(output[-256 * 1024:]))
    line = found[-1].group(0) if found else (output.strip().splitlines() or [b""])[-1]
    for path in scrub:
        line = line.replace(path.encode(), b"<tmp>")
    line = _HEX.sub(b"0x?", line)
    return line.decode("utf-8", errors="replace").strip()[:300]


@dataclass
class Launch:
    """What one run is: the command, the environment changes, where its files go, its time limit."""

    argv: List[str]
    env: Dict[str, str]
    workdir: str
    timeout_s: float
    mark: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


def run_attempt(launch: Launch, cancelled: Any = None) -> Attempt:
    """Run it in its own session (`probe/_proc.run`, output to a file); on timeout or cancellation,
    and when it ends, the whole group is killed."""
    log = os.path.join(launch.workdir, "output.log")
    start = time.monotonic()
    with open(log, "wb") as out:
        done = run(launch.argv, timeout_s=launch.timeout_s, env=launch.env, cancel=cancelled, output=out)
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
    return Attempt(done.returncode, duration, capture.data(), capture.total, calls, error=stopped)


