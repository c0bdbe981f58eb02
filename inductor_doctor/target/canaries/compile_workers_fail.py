"""Canary for compile-workers-fail: Inductor's parallel compile workers start, and compile.

torch.compile hands its Triton kernels to a pool of compile worker processes. From torch 2.4 the
pool lives in a "sidecar" subprocess (torch/_inductor/compile_worker/); before 2.4, and with
TORCHINDUCTOR_WORKER_START=fork or spawn, it is a ProcessPoolExecutor of the compiling process.
Either way it needs POSIX semaphores, which glibc keeps in /dev/shm: a missing, read-only,
unwritable or full /dev/shm stops it. The sidecar can also die of other causes (pytorch/pytorch
#131070: something in the environment wrote to its stdout; pytorch/torchtitan#3944).

This starts the pool as torch.compile does (AsyncCompile.warm_pool, then wakeup: what
torch._inductor.async_compile.maybe_warm_pool does), with two workers whatever the doctor's default
of one compile thread, waits for a worker to run a job, has a worker compile a small C++ kernel
through Inductor's own CppCodeCache, and on a GPU compiles a small function whose Triton kernels go
through the pool. It raises when the pool cannot start or a worker dies, with what the sidecar
logged. A compile that fails inside a worker for another reason (no compiler, say) is another
issue's: the pool ran it.

Usage: python compile_workers_fail.py [toolchain]
"""

import importlib.util
import os
import re
import sys
import tempfile
import time
import traceback

WORKERS = 2
READY_TIMEOUT_S = 90.0
#: What a pool that died, or could not start, raises; anything else came from a job it ran.
POOL_ERRORS = re.compile(r"BrokenProcessPool|terminated abruptly|closed pool|SubprocPool closed|"
                         r"sidecar \(pid \d+\) exited|SemLock")


def torch_release():
    """(major, minor) of the installed torch, read without importing it; None when unknown."""
    try:
        from importlib.metadata import version

        found = re.match(r"(\d+)\.(\d+)", version("torch"))
    except Exception:  # noqa: BLE001 - no metadata: let the import below decide
        return None
    return (int(found.group(1)), int(found.group(2))) if found else None


if sys.platform == "win32":
    raise SystemExit("SKIP: on Windows Inductor compiles in the main process (one compile thread)")
RELEASE = torch_release()
if RELEASE is not None and RELEASE < (2, 0):
    raise SystemExit("SKIP: torch < 2.0 has no Inductor")
if RELEASE is not None and RELEASE >= (2, 5) and importlib.util.find_spec("triton") is None:
    raise SystemExit("SKIP: no Triton here, so no compile worker pool to start (torch >= 2.5)")

# The doctor runs canaries with one compile thread; this one is about the pool. Set before the
# import: older releases start the pool as Inductor's modules are imported.
os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(WORKERS)
LOG = os.path.join(tempfile.gettempdir(), "compile_worker.log")
STDERR = os.path.join(tempfile.gettempdir(), "compile_worker.stderr")
os.environ["TORCHINDUCTOR_WORKER_SUPPRESS_LOGGING"] = "0"  # torch >= 2.8 silences the sidecar
os.environ["TORCHINDUCTOR_WORKER_LOGPATH"] = LOG  # torch >= 2.9: its output, to quote it
METHOD = "subprocess"  # until torch says


def sidecar_log():
    text = ""
    for path in (LOG, STDERR):
        try:
            with open(path, errors="replace") as f:
                text += f.read()
        except OSError:
            pass
    return text[-6000:]


def stderr_to_file():
    """Point fd 2 at a file while the pool starts: a sidecar torch gives no log file (< 2.9) inherits
    it, so its last words can be quoted. Returns the fd to restore."""
    saved = os.dup(2)
    fd = os.open(STDERR, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    return saved


def last_exception(text):
    found = [ln.strip() for ln in text.splitlines() if re.match(r"\s*[\w.]*(Error|Exception)\b[^\n]*:", ln)]
    return found[-1] if found else None


def pool_died(what):
    """Raise what a user would need: which pool, what it did, and the sidecar's own error."""
    log = sidecar_log().strip()
    message = f"Inductor's compile worker pool ({METHOD}, {WORKERS} workers) {what}"
    cause = last_exception(log)
    if cause and "SemLock" in log:
        message += ", in multiprocessing's SemLock (whose semaphores live in /dev/shm): " + cause
    elif cause:
        message += ": " + cause
    if log:
        message += "\n--- the compile worker sidecar's log ---\n" + log
    raise RuntimeError(message)


def pool_guarded(call, what):
    """`call()`; a pool that died raises as this issue, a job that failed raises as itself."""
    try:
        return call()
    except Exception as exc:
        if POOL_ERRORS.search(f"{type(exc).__name__}: {exc}"):
            pool_died(f"{what}: {type(exc).__name__}: {exc}")
        raise


start = time.monotonic()
saved_stderr = stderr_to_file()
try:
    import torch
    from torch._inductor import config

    config.compile_threads = WORKERS
    try:
        from torch._inductor.async_compile import AsyncCompile
    except ImportError:  # torch < 2.4
        from torch._inductor.codecache import AsyncCompile
    METHOD = getattr(config, "worker_start_method", None) or ("fork" if RELEASE and RELEASE < (2, 4)
                                                              else "subprocess")
    try:
        AsyncCompile.warm_pool()
    except OSError as exc:  # an in-process pool (fork, spawn, torch < 2.4) cannot start
        if "SemLock" not in traceback.format_exc():
            raise
        raise RuntimeError(f"Inductor's compile worker pool ({METHOD}, {WORKERS} workers) could not start "
                           "in this process, in multiprocessing's SemLock (whose semaphores live in "
                           f"/dev/shm): {type(exc).__name__}: {exc}") from exc
    wakeup = getattr(AsyncCompile, "wakeup", None)
    if wakeup is not None:  # torch >= 2.9: the sidecar starts its workers now, not at the first job
        wakeup()
    pool = AsyncCompile.process_pool()
finally:
    sys.stderr.flush()
    os.dup2(saved_stderr, 2)
    os.close(saved_stderr)
sidecar = getattr(pool, "process", None)  # the SubprocPool's subprocess (torch >= 2.4)
job = pool.submit(os.getpid)
while not job.done():
    if sidecar is not None and sidecar.poll() is not None:
        pool_died(f"died as it started: the sidecar exited with code {sidecar.returncode} before a worker "
                  "ran a job")
    if time.monotonic() - start > READY_TIMEOUT_S:
        pool_died(f"ran no job within {READY_TIMEOUT_S:g} s of starting")
    time.sleep(0.2)
worker = pool_guarded(job.result, "failed its first job")
ready_s = time.monotonic() - start
done = [f"worker pid {worker} ran a job {ready_s:.1f} s after the pool started"]
try:  # the job ran in a worker process, which the harness cannot see: say so
    from indoc_harness import exercised
except ImportError:  # run on its own
    exercised = print
exercised(f"Inductor's compile worker pool ({METHOD}) ran a job in worker pid {worker}")

if RELEASE is None or RELEASE >= (2, 4):  # CppCodeCache.load_async(source, submit_fn=...) from 2.4
    from torch._inductor.codecache import CppCodeCache

    SOURCE = ('#include <cstdint>\n'
              'extern "C" int64_t indoc_canary_add(int64_t a, int64_t b) { return a + b; }\n')
    try:
        lib = CppCodeCache.load_async(SOURCE, submit_fn=pool.submit)()
    except Exception as exc:  # noqa: BLE001 - sorted below: the pool's failure, or the compile's own
        if POOL_ERRORS.search(f"{type(exc).__name__}: {exc}"):
            pool_died(f"failed a C++ compile: {type(exc).__name__}: {exc}")
        last = (str(exc).strip().splitlines() or [""])[-1][:200]
        done.append(f"a C++ compile in a worker failed for another reason ({type(exc).__name__}: {last})")
    else:
        import ctypes

        lib.indoc_canary_add.restype = ctypes.c_int64
        lib.indoc_canary_add.argtypes = [ctypes.c_int64, ctypes.c_int64]
        if lib.indoc_canary_add(2, 40) != 42:
            raise AssertionError("the C++ kernel compiled in a worker computes the wrong sum")
        done.append("a C++ kernel compiled in a worker")

if torch.cuda.is_available() and importlib.util.find_spec("triton") is not None:
    def pointwise(x):
        return (x.sin() + x.cos()).relu() * 2

    x = torch.randn(4096, device="cuda")
    out = pool_guarded(lambda: torch.compile(pointwise)(x), "failed a torch.compile on cuda")
    torch.cuda.synchronize()
    if not torch.allclose(out, pointwise(x), atol=1e-5):
        raise AssertionError("torch.compile on cuda computes a different result from eager")
    if sidecar is not None and sidecar.poll() is not None:
        pool_died(f"died during a torch.compile on cuda (the sidecar exited with code {sidecar.returncode})")
    done.append("a torch.compile on cuda ran with the pool up")

raise SystemExit(f"OK: Inductor's compile worker pool ({METHOD}, {WORKERS} workers) started: "
                 + "; ".join(done))
