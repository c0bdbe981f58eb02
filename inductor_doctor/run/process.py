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
import sys
import threading
import time

from inductor_doctor.run.capture import Capture

TYPE_CHECKING = False  # no `typing` (nor `subprocess`) on the path of a command that succeeds
if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Any, Dict, List, Optional, Sequence

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
        pid = _spawn(list(argv), env, write_fd, foreground)
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
    previous = _forward_signals(pid, forwarded)
    try:
        returncode = _wait(pid, foreground)
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


def _spawn(argv: List[str], env: Optional[Dict[str, str]], stderr_fd: int, foreground: Optional[int]) -> int:
    """fork and exec `argv` as `subprocess.Popen(..., stderr=stderr_fd, close_fds=True)` with a
    `preexec_fn` would, without importing `subprocess` (milliseconds on every run): the child gets
    its own process group (and the terminal, when the doctor had it), the default disposition of
    the signals the doctor forwards, stderr on `stderr_fd` and no other descriptor of the doctor's.
    The PATH is searched as `subprocess` does; an exec that fails raises its OSError here."""
    search = [argv[0]] if os.sep in argv[0] else [os.path.join(d, argv[0]) for d in os.get_exec_path(env)]
    environ = os.environ if env is None else env
    if foreground is None and hasattr(os, "posix_spawn") and not _inherited_fds(stderr_fd):
        return _posix_spawn(search, argv, environ, stderr_fd)
    err_read, err_write = os.pipe()  # close-on-exec: EOF here means the exec succeeded
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, replaced by the command (coverage cannot follow)
        code, last = 0, errno.ENOENT
        try:
            os.close(err_read)
            _child_setup(foreground)
            if stderr_fd != 2:
                os.dup2(stderr_fd, 2)
            _close_fds(keep=err_write)
            for path in search:
                try:
                    os.execve(path, argv, environ)
                except OSError as exc:
                    if exc.errno not in (errno.ENOENT, errno.ENOTDIR) and not code:
                        code = exc.errno or errno.ENOEXEC  # subprocess reports the first such error
                    last = exc.errno or errno.ENOENT
            code = code or last
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            code = code or errno.ENOEXEC
        try:
            os.write(err_write, str(code).encode())
        finally:
            os._exit(127)
    os.close(err_write)
    try:
        chunks = []
        while True:
            try:
                chunk = os.read(err_read, 64)
            except InterruptedError:
                continue
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(err_read)
    if chunks:  # the exec failed: reap the child, raise its errno as Popen does
        _reap(pid)
        number = int(b"".join(chunks) or b"0") or errno.ENOEXEC
        raise OSError(number, os.strerror(number), argv[0])
    return pid


def _posix_spawn(search: List[str], argv: List[str], environ: Any, stderr_fd: int) -> int:
    """The common case (no terminal to hand over, no descriptor to close): posix_spawn, which runs
    no Python in the child and copies none of the doctor's memory, milliseconds less than a fork.
    Exec errors come back as OSError, the first that is not ENOENT/ENOTDIR winning (subprocess's
    rule)."""
    first: Optional[OSError] = None
    last: Optional[OSError] = None
    for path in search:
        if len(search) > 1 and not os.path.exists(path):
            continue  # ENOENT without a process made for it: a spawn per PATH entry costs a clone
        try:
            return os.posix_spawn(path, argv, environ, setpgroup=0, setsigdef=_default_signals(),
                                  file_actions=[(os.POSIX_SPAWN_DUP2, stderr_fd, 2)])
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR) and first is None:
                first = exc
            last = exc
    failed = first or last or OSError(errno.ENOENT, os.strerror(errno.ENOENT))
    raise OSError(failed.errno, failed.strerror, argv[0])


def _inherited_fds(stderr_fd: int) -> bool:
    """Whether a descriptor above stderr would reach the command through exec (one the doctor
    inherited, as from `make`): those must be closed as `close_fds=True` does, which needs a fork."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return True  # cannot tell: the fork closes them all
    for name in names:
        fd = int(name)
        if fd > 2 and fd != stderr_fd:
            try:
                if os.get_inheritable(fd):
                    return True
            except OSError:
                pass
    return False


def _default_signals() -> List[int]:
    """The signals the command starts with at their default: those the doctor forwards (unless
    whoever started the doctor ignored them: nohup, `&`) and SIGPIPE/SIGXFSZ, which Python ignores
    for itself (subprocess's restore_signals)."""
    out = [sig for sig in FORWARDED if signal.getsignal(sig) is not signal.SIG_IGN]
    return out + [getattr(signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, n)]


def _reap(pid: int) -> None:
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _close_fds(keep: int) -> None:
    """In the child: every descriptor above stderr closed but `keep` (close_fds=True's promise)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        os.closerange(3, keep)
        os.closerange(keep + 1, min(os.sysconf("SC_OPEN_MAX"), 1 << 16))
        return
    for fd in fds:
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _child_setup(foreground: Optional[int]) -> None:
    """In the child, before exec: its own group, the terminal if ours, forwarded signals default."""
    os.setpgid(0, 0)
    if foreground is not None:
        old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        try:
            os.tcsetpgrp(foreground, os.getpgrp())
        except OSError:
            pass
        signal.signal(signal.SIGTTOU, old)
    for sig in _default_signals():  # a wrapper's ignored SIGINT (nohup, `&`) stays ignored
        signal.signal(sig, signal.SIG_DFL)


def _take_terminal(fd: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, os.getpgrp())
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def _wait(pid: int, foreground: Optional[int]) -> int:
    """waitpid that follows job control: a stopped child stops the doctor too, `fg` resumes both."""
    while True:
        try:
            got, status = os.waitpid(pid, os.WUNTRACED)
        except InterruptedError:
            continue
        except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): subprocess says 0
            return 0
        if got == 0:
            continue
        if os.WIFSTOPPED(status):
            if foreground is not None:
                _take_terminal(foreground)
            os.kill(os.getpid(), signal.SIGSTOP)  # the shell sees the job stop; `fg` continues us
            if foreground is not None:
                try:
                    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
                    os.tcsetpgrp(foreground, pid)
                    signal.signal(signal.SIGTTOU, old)
                except OSError:
                    pass
            try:
                os.killpg(pid, signal.SIGCONT)
            except OSError:
                pass
            continue
        return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


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
