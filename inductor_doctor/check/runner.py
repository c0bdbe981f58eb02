"""The subprocess pool that runs canaries: one process group each, fresh caches, a timeout.

A canary is the patient, not the doctor: it may hang, abort, segfault or print megabytes. Each one
runs in its own session (so its whole process tree can be killed), writes its output to files
(never to a pipe we could block on), and is killed as a group on timeout, Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.check.canary_env import MARKER_ENV, STAGE_FILE, canary_env
from inductor_doctor.target import marker, script

HARNESS = script("harness.py")
MARKER = marker("harness.py")
HEAD_BYTES = 16 * 1024
TAIL_BYTES = 64 * 1024
#: Less free space than this in the scratch directory after a canary that reported nothing: say so.
FULL_DISK_BYTES = 256 * 1024


@dataclass(frozen=True)
class CanaryJob:
    key: str  # unique per run, e.g. "block-mask-cpu@cpu"
    script: Path
    device: str
    python: str
    timeout_s: float
    needs: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    affected_signals: Tuple[int, ...] = ()  # a death by one of these *is* the issue
    #: Jobs with the same `one_at_a_time` run one after another (a nearly full GPU: side by side,
    #: each canary's CUDA context and buffers would starve the others); None runs in parallel.
    one_at_a_time: Optional[str] = None


@dataclass
class CanaryRun:
    """How one canary process ended. `result` is the harness's JSON line, if it printed one."""

    job: CanaryJob
    returncode: Optional[int]
    timed_out: bool
    interrupted: bool
    duration_s: float
    stdout: str
    stderr: str
    result: Optional[dict]
    error: Optional[str] = None  # the canary could not even be started
    cached: bool = False  # replayed from the canary cache, not run now
    unreaped: bool = False  # killed, but it did not die within the grace (stuck in the kernel)
    last_seen: Optional[str] = None  # where the canary was when it was stopped (timeout)

    @property
    def signal(self) -> Optional[int]:
        rc = self.returncode
        if rc is None:
            return None
        if rc < 0:
            return -rc
        if rc > 128 and rc - 128 < 65:  # a shell or wrapper reporting a signal death
            return rc - 128
        return None

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr


def _read_bounded(path: Path) -> str:
    """The head and the tail of a file that may hold megabytes of noise."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            if size <= HEAD_BYTES + TAIL_BYTES:
                data = fh.read()
            else:
                head = fh.read(HEAD_BYTES)
                fh.seek(size - TAIL_BYTES)
                tail = fh.read()
                skipped = size - HEAD_BYTES - TAIL_BYTES
                data = head + f"\n[... {skipped} bytes skipped ...]\n".encode() + tail
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _parse_result(stdout: str) -> Optional[dict]:
    idx = stdout.rfind(MARKER)
    if idx < 0:
        return None
    line = stdout[idx + len(MARKER) :].strip().splitlines()
    try:
        value = json.loads(line[0]) if line else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ProcessGroups:
    """Every live canary process group, so that an interrupt can kill them all.

    A group is registered under the same lock that `kill_all` takes, and a stop that came first is
    seen there: a canary started while `kill_all` runs is killed, never left behind.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pgids: Dict[int, None] = {}
        self.stopping = False

    def add(self, pgid: int) -> bool:
        """Register a group; False (and the group killed) when a stop already began."""
        with self._lock:
            if self.stopping:
                kill_group(pgid)
                return False
            self._pgids[pgid] = None
            return True

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._pgids.pop(pgid, None)

    def kill_all(self) -> None:
        with self._lock:
            self.stopping = True
            pgids = list(self._pgids)
        for pgid in pgids:
            kill_group(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group that is already gone is fine."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _descendants(pid: int) -> List[int]:
    """Every live descendant of `pid`, including those in other sessions (psutil; best effort)."""
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except Exception:  # gone already, or psutil cannot see it
        return []


def kill_strays(marker: str, known: Sequence[int] = ()) -> None:
    """SIGKILL the processes a canary left behind outside its group: known pids and marked ones."""
    for pid in known:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        import psutil

        me = os.getuid()
        for proc in psutil.process_iter(["uids"]):
            try:
                uids = proc.info.get("uids")
                if uids is not None and uids.real != me and me != 0:
                    continue
                if proc.environ().get(MARKER_ENV) == marker:
                    proc.kill()
            except (psutil.Error, OSError):
                continue
    except Exception:  # no psutil, no /proc: the process group kill is all we have
        pass


def _disk_full(path: Path) -> Optional[str]:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize >= FULL_DISK_BYTES:
        return None
    return (
        f"its temporary directory {path.parent} filled up (no space left on device); "
        "free some space or point TMPDIR elsewhere"
    )


#: How often a running canary is looked at (an interrupt is noticed this fast).
POLL_S = 0.2
#: How long a killed canary is given to die before it is reported as unkillable and left behind.
REAP_GRACE_S = 5.0


def _wait(proc: subprocess.Popen, timeout_s: float,
          groups: ProcessGroups) -> Tuple[Optional[int], bool, bool]:
    """(return code, timed out, stopped): waits in short slices, so a stop is seen at once."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            return proc.wait(timeout=max(0.0, min(POLL_S, left))), False, False
        except subprocess.TimeoutExpired:
            if groups.stopping:
                return None, False, True
            if time.monotonic() >= deadline:
                return None, True, False


def _reap(proc: subprocess.Popen, grace_s: float = REAP_GRACE_S) -> Tuple[Optional[int], bool]:
    """(return code, unreaped) of a killed process: a bounded wait, never a hang.

    A process stuck in the kernel (a hung GPU driver, a lost NFS server) ignores SIGKILL until the
    kernel lets go: waiting for it would hang the doctor past any `--timeout`.
    """
    try:
        return proc.wait(timeout=grace_s), False
    except subprocess.TimeoutExpired:
        return None, True


def _last_seen(scratch: Path) -> Optional[str]:
    try:
        text = (scratch / STAGE_FILE).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text[:400] or None


@dataclass
class _Ending:
    """How a started canary process ended, as `_supervise` saw it."""

    returncode: Optional[int] = None
    timed_out: bool = False
    unreaped: bool = False
    last_seen: Optional[str] = None


def _start(job: CanaryJob, scratch: Path, env: Mapping[str, str], out: Any, err: Any,
           groups: ProcessGroups) -> subprocess.Popen:
    """The canary in a session of its own, registered for `kill_all` before anything else."""
    cmd = [job.python, str(HARNESS), str(job.script), job.device, ",".join(job.needs)]
    if groups.stopping:
        raise InterruptedError("interrupted before it started")
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=dict(env),
                                cwd=str(scratch), start_new_session=True)
    except OSError as exc:
        raise InterruptedError(f"could not start {job.python}: {exc.strerror or exc}") from None
    if not groups.add(proc.pid):  # a stop began as it started: already killed
        _reap(proc)
        raise InterruptedError("interrupted before it started")
    return proc


def _supervise(proc: subprocess.Popen, job: CanaryJob, scratch: Path, groups: ProcessGroups) -> _Ending:
    """Wait for the canary to end, its timeout or a stop; then kill its whole tree, escapees too."""
    ending = _Ending()
    strays: List[int] = []
    try:
        ending.returncode, ending.timed_out, stopped = _wait(proc, job.timeout_s, groups)
        if ending.timed_out or stopped:
            ending.last_seen = _last_seen(scratch) if ending.timed_out else None
            strays = _descendants(proc.pid)
            kill_group(proc.pid)
            ending.returncode, ending.unreaped = _reap(proc)
    except BaseException:  # interrupted: the pool's kill_all is on its way; be thorough
        strays = _descendants(proc.pid)
        raise
    finally:
        # Leftovers (compile workers, a forked child) die with the group; escapees by marker.
        kill_group(proc.pid)
        groups.discard(proc.pid)
        kill_strays(str(scratch), strays)
    return ending


def run_one(
    job: CanaryJob,
    groups: ProcessGroups,
    base_env: Optional[Mapping[str, str]] = None,
    scratch_root: Optional[str] = None,
) -> CanaryRun:
    """One canary, start to end: never raises for what the canary did, only for an interrupt."""
    start = time.monotonic()
    ending = _Ending()
    error: Optional[str] = None
    stdout = stderr = ""
    scratch: Optional[Path] = None
    try:
        try:
            scratch = Path(tempfile.mkdtemp(prefix="indoc-canary-", dir=scratch_root))
            env = canary_env(os.environ if base_env is None else base_env, scratch, job.env, job.device)
        except OSError as exc:
            where = scratch_root or tempfile.gettempdir()
            raise InterruptedError(f"no scratch directory in {where} ({exc.strerror or exc})") from None
        out_path, err_path = scratch / "stdout", scratch / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            ending = _supervise(_start(job, scratch, env, out, err, groups), job, scratch, groups)
        stdout, stderr = _read_bounded(out_path), _read_bounded(err_path)
        if _parse_result(stdout) is None and not ending.timed_out and not groups.stopping:
            error = _disk_full(scratch)
    except InterruptedError as exc:
        error = str(exc)
    except OSError as exc:  # the output files could not be opened or read (a full or vanished tmp)
        error = f"its output could not be kept ({exc.strerror or exc})"
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return CanaryRun(
        job=job,
        returncode=ending.returncode,
        timed_out=ending.timed_out,
        interrupted=groups.stopping and not ending.timed_out,
        duration_s=time.monotonic() - start,
        stdout=stdout,
        stderr=stderr,
        result=_parse_result(stdout),
        error=error,
        unreaped=ending.unreaped,
        last_seen=ending.last_seen,
    )


def _available_gib() -> float:
    """MemAvailable from /proc (no psutil import on the way to a cached answer), else psutil's."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return psutil.virtual_memory().available / 2**30
    except Exception:
        return 4.0


def default_jobs(n_gpus: int = 0) -> int:
    """Canaries are memory-hungry (torch alone is ~0.5-1 GB): bound by cores and by memory."""
    cores = os.cpu_count() or 1
    mem_gib = _available_gib()
    by_mem = max(1, int(mem_gib // 2.5))
    return max(1, min(cores + n_gpus, by_mem, 16))


def run_all(
    jobs: Sequence[CanaryJob],
    parallel: int,
    on_done: Optional[Callable[[CanaryRun], None]] = None,
    on_start: Optional[Callable[[CanaryJob], None]] = None,
    groups: Optional[ProcessGroups] = None,
    base_env: Optional[Mapping[str, str]] = None,
) -> List[CanaryRun]:
    """Runs every job, `parallel` at a time, each from `base_env` (this process's environment by
    default; `canary_env` decides what of it a canary gets). On KeyboardInterrupt every group is
    killed first."""
    groups = groups or ProcessGroups()
    results: Dict[str, CanaryRun] = {}
    serial = {j.one_at_a_time: threading.Lock() for j in jobs if j.one_at_a_time}

    def task(job: CanaryJob) -> CanaryRun:
        lock = serial.get(job.one_at_a_time) if job.one_at_a_time else None
        if lock is not None:
            lock.acquire()
        try:
            if on_start:
                on_start(job)
            run = run_one(job, groups, base_env)
        finally:
            if lock is not None:
                lock.release()
        results[job.key] = run
        if on_done:
            on_done(run)
        return run

    pool = ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="canary")
    futures = [pool.submit(task, job) for job in jobs]
    try:
        for fut in futures:
            while True:
                try:
                    fut.result(timeout=0.2)
                    break
                except FutureTimeout:
                    continue
    except BaseException:
        groups.kill_all()
        for fut in futures:
            fut.cancel()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
    return [results[j.key] for j in jobs if j.key in results]
