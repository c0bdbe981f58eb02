"""Run a command exactly as the shell would, teeing only its stderr, with signals passed through.

The child inherits stdin and stdout: the doctor never touches the bytes a pipeline reads, so a
command writing a gigabyte to stdout runs at its own speed. Its stderr goes through a pipe that one
thread copies to the doctor's stderr as it arrives while `Capture` keeps the bounded part a
diagnosis needs.

The child has its own process group, so a signal the doctor receives (SIGTERM from a scheduler,
SIGHUP, SIGINT sent to the doctor) is forwarded to the whole group exactly once. When stdin is the
terminal and the doctor is in the foreground, the child's group is made the terminal's foreground
group, as a shell does, so Ctrl-C and Ctrl-Z reach it directly and it can read the terminal; the
doctor takes the terminal back when it ends, and follows a Ctrl-Z stop and a `fg`.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from inductor_doctor.run.capture import Capture

#: Signals a wrapper must pass on (SIGKILL and SIGSTOP cannot be caught; the child then sees its
#: pipe close or its parent stop).
FORWARDED = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2",
                                       "SIGWINCH", "SIGCONT")
    if hasattr(signal, name)
)


class Completed:
    """How the command ended: its exit status or signal, and what was kept of its stderr. (A plain
    class: `dataclasses` costs milliseconds to import, on every run of the wrapped command.)"""

    def __init__(self, argv: List[str], returncode: int, duration_s: float, capture: Capture,
                 forwarded: List[int], started: bool = True) -> None:
        self.argv = argv
        self.returncode = returncode  # as subprocess: negative is the signal that killed it
        self.duration_s = duration_s
        self.capture = capture
        self.forwarded = forwarded  # signals the doctor received and passed on, in order
        self.started = started  # False: it could not be started (not found, not executable)

    @property
    def signal(self) -> Optional[int]:
        return -self.returncode if self.returncode < 0 else None

    @property
    def exit_code(self) -> int:
        """What a shell reports for it: the status, or 128 + the signal."""
        return 128 + -self.returncode if self.returncode < 0 else self.returncode


def run_passthrough(argv: Sequence[str], env: Optional[Dict[str, str]] = None,
                    capture: Optional[Capture] = None) -> Completed:
    """Run `argv` with stdin/stdout inherited and stderr teed; the exit status comes back unchanged.

    A command that cannot start (not found, not executable) ends like the shell's: 127 or 126,
    with the shell's words on stderr.
    """
    capture = capture or Capture()
    foreground = _terminal_foreground()
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), stdin=None, stdout=None, stderr=write_fd, env=env,
                                preexec_fn=_child_setup(foreground), close_fds=True)
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        code = 127 if exc.errno in (errno.ENOENT, errno.ENOTDIR) else 126
        os.write(2, f"inductor-doctor run: {argv[0]}: {exc.strerror}\n".encode())
        return Completed(list(argv), code, 0.0, capture, [], started=False)
    os.close(write_fd)
    pump = threading.Thread(target=_pump, args=(read_fd, capture), name="indoc-stderr", daemon=True)
    pump.start()
    forwarded: List[int] = []
    previous = _forward_signals(proc.pid, forwarded)
    try:
        returncode = _wait(proc, foreground)
    finally:
        _restore(previous)
        if foreground is not None:
            _take_terminal(foreground)
    pump.join()
    return Completed(list(argv), returncode, time.monotonic() - start, capture, forwarded)


def _terminal_foreground() -> Optional[int]:
    """The terminal fd the child should own while it runs, when the doctor is in its foreground."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


def _child_setup(foreground: Optional[int]) -> Callable[[], None]:
    def setup() -> None:  # in the child, before exec: its own group, the terminal if ours
        os.setpgid(0, 0)
        if foreground is not None:
            old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            try:
                os.tcsetpgrp(foreground, os.getpgrp())
            except OSError:
                pass
            signal.signal(signal.SIGTTOU, old)
        for sig in FORWARDED:  # a wrapper's ignored SIGINT (nohup, `&`) stays ignored; others default
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, signal.SIG_DFL)
    return setup


def _take_terminal(fd: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, os.getpgrp())
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def _wait(proc: subprocess.Popen[bytes], foreground: Optional[int]) -> int:
    """waitpid that follows job control: a stopped child stops the doctor too, `fg` resumes both."""
    while True:
        try:
            pid, status = os.waitpid(proc.pid, os.WUNTRACED)
        except ChildProcessError:
            return proc.wait()
        if pid == 0:
            continue
        if os.WIFSTOPPED(status):
            if foreground is not None:
                _take_terminal(foreground)
            os.kill(os.getpid(), signal.SIGSTOP)  # the shell sees the job stop; `fg` continues us
            if foreground is not None:
                try:
                    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
                    os.tcsetpgrp(foreground, proc.pid)
                    signal.signal(signal.SIGTTOU, old)
                except OSError:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGCONT)
            except OSError:
                pass
            continue
        proc.returncode = (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
        return proc.returncode


def _forward_signals(pgid: int, seen: List[int]) -> Dict[int, Any]:
    def forward(signum: int, frame: Any) -> None:
        if signum != getattr(signal, "SIGCONT", None) and signum != getattr(signal, "SIGWINCH", None):
            seen.append(signum)
        try:
            os.killpg(pgid, signum)
        except OSError:
            pass

    previous: Dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in FORWARDED:
        try:
            if signal.getsignal(sig) is signal.SIG_IGN and sig != getattr(signal, "SIGCONT", None):
                continue  # ignored by whoever started the doctor: the child inherited that too
            previous[sig] = signal.signal(sig, forward)
        except (OSError, ValueError):
            pass
    return previous


def _restore(previous: Dict[int, Any]) -> None:
    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (OSError, ValueError, TypeError):
            pass


def _pump(fd: int, capture: Capture) -> None:
    """Copy the child's stderr to ours as it comes; keep what the diagnosis needs. A closed stderr
    of ours never blocks the child: its output is still read, and kept."""
    out_ok = True
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not chunk:
                return
            if out_ok:
                out_ok = _write_all(2, chunk)
            capture.feed(chunk)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except OSError:
            return False
        view = view[n:]
    return True


_CORE_DUMPING = frozenset(
    getattr(signal, name) for name in ("SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
                                       "SIGSEGV", "SIGSYS", "SIGXCPU", "SIGXFSZ")
    if hasattr(signal, name)
)


#: Signals by which someone asked the command to stop: what it then does is no failure of its own.
ASKED_TO_STOP = frozenset(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                          if hasattr(signal, n))


def needs_diagnosis(completed: Completed) -> bool:
    """A failure of the program, not one the user asked for with a signal."""
    if completed.returncode == 0 or not completed.started:
        return False
    return not set(completed.forwarded) & ASKED_TO_STOP


def reraise(completed: Completed) -> int:
    """End the doctor the way the command ended: the same signal, else 128 + N, else its status."""
    sig = completed.signal
    if sig is None:
        return completed.returncode
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if sig in _CORE_DUMPING:  # the program's core is its own; the doctor leaves none beside it
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        time.sleep(0.05)  # the signal is delivered before this returns, unless it cannot kill us
    except (OSError, ValueError):
        pass
    return completed.exit_code
