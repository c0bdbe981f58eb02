"""Run one external command with a hard deadline, never letting it hang or crash the probe.

Compilers fork `cc1plus`/`ld`, `nvidia-smi` can block in the driver: on timeout the whole process
group is killed, not just the child we started, and a missing or unrunnable program is a result
(`error`), not an exception.

The one runner of the doctor's bounded commands: the probe keeps their output in memory; `why`
(`why/attempt.py`) sends it to a file (`output=`), where a torch.compile run's gigabytes of logs
never pass through the doctor, and has the group killed when the command ends too (compile workers
it left behind die with it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Mapping, Optional, Sequence, Tuple

DEFAULT_TIMEOUT_S = 20.0
#: How long a killed process is given to go before the probe stops waiting for it (one stuck in
#: the kernel, e.g. nvidia-smi in a hung driver, ignores SIGKILL until the kernel lets go).
REAP_GRACE_S = 5.0
#: How often a cancellable run looks at its cancel flag.
POLL_S = 0.02


@dataclass
class ProcResult:
    argv: Sequence[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: Optional[str] = None  # could not start it at all (not found, not executable, ...)
    strerror: Optional[str] = None  # the OS's words for why it could not start

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.returncode == 0

    def why(self) -> str:
        """One line saying why it failed, for a note or a reason."""
        if self.error:
            return self.error
        if self.timed_out:
            return f"`{self.argv[0]}` timed out"
        if self.returncode is not None and self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"`{self.argv[0]}` was killed by {name}"
        line = first_error_line(self.stderr) or first_error_line(self.stdout)
        return line or f"`{self.argv[0]}` exited with code {self.returncode}"


def first_error_line(text: str) -> str:
    """The line a human looks for first: the first one saying `error`, else the first non-empty one."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower() or "fatal" in ln.lower():
            return ln[:300]
    return lines[0][:300] if lines else ""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def _drain(proc: subprocess.Popen) -> Tuple[bytes, bytes]:
    """What a killed process printed, waiting at most REAP_GRACE_S for it to go."""
    try:
        return proc.communicate(timeout=REAP_GRACE_S)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return b"", b""


def run(
    argv: Sequence[str],
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
    cwd: Optional[str] = None,
    cancel: Optional[threading.Event] = None,
    output: Optional[IO[bytes]] = None,
) -> ProcResult:
    """`argv` to completion, to the deadline, or until `cancel` is set; never waits unbounded.

    Output is decoded leniently (compilers localise their messages). With `output` (a file), stdout
    and stderr go there together, in order, instead (`stdout`/`stderr` stay empty), and the whole
    group is killed when the command ends, whatever it left running.
    """
    result = ProcResult(argv=list(argv))
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE if output is None else output,
            stderr=subprocess.PIPE if output is None else subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        result.strerror = exc.strerror if isinstance(exc, OSError) else None
        result.error = f"cannot run `{argv[0]}`: {exc.strerror if isinstance(exc, OSError) else exc}"
        return result
    if output is not None:
        return _to_file(proc, result, time.monotonic() + timeout_s, cancel)
    data = input.encode() if input is not None else None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            left = deadline - time.monotonic()
            slice_s = left if cancel is None else min(POLL_S, left)
            try:
                out, err = proc.communicate(data, timeout=max(0.0, slice_s))
                break
            except subprocess.TimeoutExpired:
                data = None  # communicate() keeps what it already sent
                if cancel is not None and cancel.is_set():
                    _kill_group(proc)
                    out, err = _drain(proc)
                    result.error = "cancelled"
                    break
                if time.monotonic() >= deadline:
                    _kill_group(proc)
                    out, err = _drain(proc)
                    result.timed_out = True
                    break
    except BaseException:
        _kill_group(proc)
        try:
            proc.wait(timeout=REAP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        raise
    result.returncode = proc.returncode
    result.stdout = out.decode("utf-8", "replace") if out else ""
    result.stderr = err.decode("utf-8", "replace") if err else ""
    return result


def c_locale_env(extra: Optional[Mapping[str, str]] = None) -> dict:
    """The current environment with messages in English, so that version and error lines parse."""
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)
    if extra:
        env.update(extra)
    return env


def _to_file(proc: subprocess.Popen, result: ProcResult, deadline: float,
             cancel: Optional[threading.Event]) -> ProcResult:
    """`run` with its output in a file: wait for the command, the deadline or the cancel flag, then
    kill the group either way."""
    try:
        while True:
            left = deadline - time.monotonic()
            try:
                result.returncode = proc.wait(timeout=max(0.0, left if cancel is None else min(POLL_S, left)))
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    result.error = "cancelled"
                    break
                if time.monotonic() >= deadline:
                    result.timed_out = True
                    break
    finally:
        _kill_group(proc)
        try:
            proc.wait(timeout=REAP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    return result
