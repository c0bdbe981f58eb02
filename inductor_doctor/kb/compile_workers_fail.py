"""Inductor's parallel compile workers fail: the worker pool dies, or cannot start.

torch.compile hands its Triton kernels to a pool of compile worker processes (C++ kernels compile
on threads). torch 2.0-2.3 fork that pool from the compiling process as Inductor is imported;
from 2.4 it lives in a "sidecar" subprocess (`torch/_inductor/compile_worker/`, `SubprocPool`)
unless `TORCHINDUCTOR_WORKER_START=fork|spawn` (read by 2.4-2.5 and 2.7 on, not 2.6) puts it back
in the compiling process; from 2.5 it is started only where Triton is installed.

Every such pool needs POSIX semaphores, which glibc keeps as files in /dev/shm. Where /dev/shm is
missing (AWS Lambda), read-only, not writable or full (Docker's 64 MB, filled by DataLoader
batches), making them fails: `OSError: [Errno 30] Read-only file system` (28 when full, 13 when
not writable, 2 when missing), in multiprocessing's SemLock. Seen with torch 2.13 (CPU) and 2.11
(H100): an in-process pool makes torch.compile fail (`BackendCompilerFailed: backend='inductor'
raised: OSError: [Errno 30] Read-only file system`); the sidecar dies as it starts its pool
("Uncaught exception in compile_worker subprocess", silenced by default from 2.8), torch 2.4.1-2.13
never notice, and every Triton kernel then compiles in the main process, one at a time. From 2.14
the parent notices, and the compile fails with "Attempting to use a closed pool" (read in the
source; the same error as pytorch/torchtitan#3944, whose sidecar died of another cause).

/dev/shm is a plain fact (probe/caches.py); the canary starts the real pool the way torch.compile
does and has a worker compile a kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Mapping, Optional

from packaging.version import Version

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one, platform_is_linux
from inductor_doctor.kb._rules import not_installed, release, unknown

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, ShmInfo

METHODS = ("subprocess", "fork", "spawn")


def forced_threads(version: Version, env: Mapping[str, str]) -> Optional[int]:
    """TORCHINDUCTOR_COMPILE_THREADS as torch reads it (2.1 on; 2.0 reads no variable)."""
    raw = env.get("TORCHINDUCTOR_COMPILE_THREADS")
    if raw is None or version < Version("2.1"):
        return None
    try:
        return int(raw.strip())
    except ValueError:
        return None


def start_method(version: Version, env: Mapping[str, str]) -> str:
    """How this torch starts its compile workers (torch/_inductor/config.py of each release)."""
    if version < Version("2.4"):
        return "fork"  # 2.0-2.1: hard-coded; 2.2-2.3: config.worker_start_method, no variable
    if (version.major, version.minor) == (2, 6):
        return "subprocess"  # 2.6 always uses the sidecar and reads no TORCHINDUCTOR_WORKER_START
    return env.get("TORCHINDUCTOR_WORKER_START", "subprocess").strip()


def errno_text(shm: ShmInfo) -> str:
    """What multiprocessing's SemLock raises on this /dev/shm (each seen with torch 2.13)."""
    if shm.exists is False:
        return "FileNotFoundError: [Errno 2] No such file or directory"
    if shm.read_only:
        return "OSError: [Errno 30] Read-only file system"
    if shm.writable is False:
        return "PermissionError: [Errno 13] Permission denied"
    return "OSError: [Errno 28] No space left on device"


def _size(n: Optional[int]) -> str:
    if n is None:
        return "no size limit"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _sidecar_fate(version: Version) -> str:
    if version < Version("2.4.1"):
        return ("the sidecar dies as it starts its pool, and torch 2.4.0 logs 'SubprocPool unclean exit' "
                "(what then happens to the waiting compile was not verified)")
    if version < Version("2.14"):
        return ("the sidecar dies as it starts its pool ('Uncaught exception in compile_worker subprocess', "
                "silenced unless TORCHINDUCTOR_WORKER_SUPPRESS_LOGGING=0 from torch 2.8), torch does not "
                "notice, and every Triton kernel compiles in the main process, one at a time")
    return ("the sidecar dies as it starts its pool, and torch fails the compile: 'Attempting to use a "
            "closed pool'")


def rule(facts: Facts) -> List[RuleOutcome]:
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch")
    if platform_is_linux(facts) is False:
        return one(Status.NOT_APPLICABLE, f"{facts.python.platform}: multiprocessing's semaphores do not "
                   "live in /dev/shm (and on Windows Inductor compiles in the main process)")
    version = release(torch.version)
    if version is None:
        return unknown(f"the release of torch {torch.version}")
    env = facts.env
    threads = forced_threads(version, env)
    if threads is not None and threads <= 1:
        return one(Status.NOT_APPLICABLE, f"TORCHINDUCTOR_COMPILE_THREADS={threads}: Inductor compiles "
                   "in the main process and starts no worker pool")
    shm = facts.caches.shm if facts.caches is not None else None
    if threads is None and shm is not None and shm.cpus == 1:
        return one(Status.NOT_APPLICABLE, "one usable CPU: Inductor's default is one compile thread, "
                   "and no worker pool")
    method = start_method(version, env)
    if method not in METHODS:
        return one(Status.AFFECTED, f"TORCHINDUCTOR_WORKER_START={method} is none of "
                   f"{', '.join(METHODS)}: importing torch._inductor.config fails with "
                   f"'AssertionError: Invalid start method: {method}'")
    has_triton = facts.triton is not None and bool(facts.triton.version)
    if version >= Version("2.5") and not has_triton:
        aside = f"; /dev/shm would stop it: {shm.error}" if shm is not None and shm.error else ""
        return one(Status.OK, f"torch {torch.version} starts its compile worker pool only for Triton "
                   "kernels, and Triton is not installed (Inductor's C++ kernels compile on threads)"
                   + aside)
    if shm is None:
        return one(Status.INCONCLUSIVE, "/dev/shm was not probed")
    workers = (f"{threads} workers (TORCHINDUCTOR_COMPILE_THREADS)" if threads is not None
               else f"{min(32, shm.cpus)} workers, one per CPU" if shm.cpus else "one worker per CPU")
    pool = f"Inductor's '{method}' compile worker pool ({workers})"
    if shm.error is None:
        where = f"{shm.fs_type} at {shm.mount_point}" if shm.mount_point else shm.path
        free = f", {_size(shm.free_bytes)} free" if shm.free_bytes is not None else ""
        return one(Status.OK, f"{shm.path} ({where}, {_size(shm.size_bytes)}{free}) is writable: {pool} "
                   "can make its semaphores there")
    error = errno_text(shm)
    if method in ("fork", "spawn") and not shm.full:
        why = ("torch < 2.4 always does" if version < Version("2.4")
               else f"TORCHINDUCTOR_WORKER_START={method}")
        return one(Status.AFFECTED, f"{shm.error}: {pool} is made in the compiling process ({why}), "
                   f"and multiprocessing cannot make its semaphores: torch.compile fails with '{error}'")
    if method in ("fork", "spawn"):
        return one(Status.LIKELY, f"{shm.error}: {pool} is made in the compiling process; if its "
                   f"semaphores do not fit, torch.compile fails with '{error}'")
    return one(Status.LIKELY, f"{shm.error}: {pool} cannot make its semaphores ('{error}'): "
                   + _sidecar_fate(version))
