"""What a canary's environment is, decided here and in the harness, nowhere else.

A canary starts from the user's environment (this process's, or the one a check's request gives:
a workaround `fix` tries), keeps what shapes the stack under test, replaces the caches and TMPDIR
by fresh ones in its scratch directory, and sets aside what would make the test hollow
(`canary_env`); every canary is also given where the machine facts it may keep live and how many
threads may compile its CPU kernels (`machine_env`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from inductor_doctor.core.envvars import bypass_table

#: Every canary process carries this variable (its scratch directory), so that a process that left
#: the canary's process group (setsid, a daemon) can still be found and killed when the run ends.
MARKER_ENV = "INDUCTOR_DOCTOR_CANARY"
#: Where the harness writes where the canary is, every half second (see target/harness.py).
STAGE_FILE = "stage"


#: Set by the check (`machine_env`) where a CPU canary may compile its C++ kernels on threads.
CPU_THREADS_ENV = "INDUCTOR_DOCTOR_CPU_COMPILE_THREADS"


def compile_threads(base: Mapping[str, str], extra: Mapping[str, str], device: str) -> Tuple[str, bool]:
    """Inductor's compile threads in a canary, and whether Triton's pool of compile workers must stay
    cold. INDUCTOR_DOCTOR_COMPILE_THREADS decides where it is set. Otherwise one, since canaries run
    side by side and a pool of compile workers costs a torch import each, except on the CPU where
    the check allows more: there Inductor compiles C++ kernels on plain threads (block-mask-cpu's
    three kernels side by side), and TORCH_WARM_POOL=0 keeps the Triton pool, which a CPU compile
    never uses, from starting."""
    value = base.get("INDUCTOR_DOCTOR_COMPILE_THREADS", "").strip()
    if value.isdigit() and int(value) >= 1:
        return value, False
    cpu = extra.get(CPU_THREADS_ENV, "")
    if device == "cpu" and cpu.isdigit() and int(cpu) > 1:
        return cpu, True
    return "1", False


def canary_env(base: Mapping[str, str], scratch: Path, extra: Mapping[str, str],
               device: str = "") -> Dict[str, str]:
    """What a canary inherits from the user, decided here and in the harness, nowhere else.

    Kept: everything that shapes the stack under test: the compiler and its flags (CC, CXX,
    CFLAGS...), the search paths (PATH, LD_LIBRARY_PATH, PYTHONPATH, CPATH...), device visibility
    (CUDA_VISIBLE_DEVICES, PJRT_DEVICE...), and every other TORCHINDUCTOR_*/TRITON_* setting.
    Replaced: Inductor's and Triton's cache directories and TMPDIR by fresh ones in the canary's
    scratch directory (a cache hit would compile nothing; where the user's caches live is a static
    check, cache-dir-*), the compile threads above, unbuffered output.
    Set aside: what would make the test hollow (envvars.BYPASSES: compile off, errors swallowed into
    an eager fallback, another backend). The table goes to the harness ($INDUCTOR_DOCTOR_BYPASS),
    which removes those variables and undoes those config values in the canary's own process, where
    a sitecustomize may have set them too, and reports what it set aside.
    """
    env = dict(base)
    threads, cold_pool = compile_threads(base, extra, device)
    env.update(
        TORCHINDUCTOR_CACHE_DIR=str(scratch / "inductor"),
        TRITON_CACHE_DIR=str(scratch / "triton"),
        TORCHINDUCTOR_COMPILE_THREADS=threads,
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        TMPDIR=str(scratch / "tmp"),
    )
    if cold_pool:
        env["TORCH_WARM_POOL"] = "0"
    env.update(extra)
    env[MARKER_ENV] = str(scratch)
    env["INDUCTOR_DOCTOR_BYPASS"] = bypass_table()
    env["INDUCTOR_DOCTOR_STAGE_FILE"] = str(scratch / STAGE_FILE)
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def machine_env(facts: Any) -> Dict[str, str]:
    """What every canary is given: where to keep machine facts that are not under test
    (target/vec_isa.py) and the compiler they were learned with, and how many threads may compile
    a CPU canary's kernels."""
    from inductor_doctor.core.paths import cache_dir

    env: Dict[str, str] = {}
    threads = cpu_compile_threads(facts)
    if threads > 1:
        env[CPU_THREADS_ENV] = str(threads)
    root = cache_dir()
    if root is not None:
        cxx = facts.cxx
        env["INDUCTOR_DOCTOR_MACHINE_DIR"] = str(root / "machine")
        env["INDUCTOR_DOCTOR_CXX_ID"] = f"{cxx.path} {cxx.version} {cxx.kind}"
    return env


#: This many threads compile a CPU canary's C++ kernels (block-mask-cpu has three), on a host of
#: more than one CPU.
MAX_CPU_COMPILE_THREADS = 4


def cpu_compile_threads(facts: Any) -> int:
    """How many threads may compile a CPU canary's C++ kernels: a user's CPU compile uses several
    too, and the kernels are the code under test either way (a compile error is raised from the
    thread as it is in the main one). Only on torch 2.5 and later, where TORCH_WARM_POOL=0 is read
    and no pool of compile workers starts with more threads (read from 2.5.1, 2.6, 2.9 and 2.13);
    torch 2.0-2.3 fork that pool as codecache is imported, on any device, which is the very thing
    compile-workers-fail looks at."""
    from inductor_doctor.kb._catalog import version_tuple
    from inductor_doctor.probe.caches import usable_cpus

    torch = version_tuple(facts.torch.version if facts.torch else None, 2)
    if torch is None or torch < (2, 5):
        return 1
    # More threads than cores on a small host: each thread only waits on its g++, and three kernels
    # on two threads leave a core idle while the third compiles (10.4 s against 11.1 s here).
    return MAX_CPU_COMPILE_THREADS if (usable_cpus() or 1) > 1 else 1


def applied(change: Mapping[str, Optional[str]], base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """`base` (this process's environment by default) with `change` applied: a value sets, None
    unsets. What a check of a request with `env` runs under: its probe and its canaries."""
    env = dict(os.environ if base is None else base)
    for name, value in change.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env
