"""Run one external command with a hard deadline, never letting it hang or crash the probe.

Compilers fork `cc1plus`/`ld`, `nvidia-smi` can block in the driver: on timeout the whole process
group is killed, not just the child we started, and a missing or unrunnable program is a result
(`error`), not an exception.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

DEFAULT_TIMEOUT_S = 20.0


@dataclass
class ProcResult:
    argv: Sequence[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: Optional[str] = None  # could not start it at all (not found, not executable, ...)

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


def run(
    argv: Sequence[str],
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
    cwd: Optional[str] = None,
) -> ProcResult:
    """`argv` to completion or to the deadline; output decoded leniently (compilers localise)."""
    result = ProcResult(argv=list(argv))
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        result.error = f"cannot run `{argv[0]}`: {exc.strerror if isinstance(exc, OSError) else exc}"
        return result
    try:
        out, err = proc.communicate(input.encode() if input is not None else None, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        result.timed_out = True
    except BaseException:
        _kill_group(proc)
        proc.wait()
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
