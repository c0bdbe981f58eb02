"""Toolchain facts, gathered without importing torch in this process.

`gather(python, live)` is the one entry point: static facts from package metadata, torch's own
files, ELF notes and symbols, the compilers' own answers and the driver's files; with `live`, one
short subprocess of the target interpreter adds what only a live torch knows.

The probes are independent subprocesses and file reads, so they run on threads: the target
interpreter's self-description and the driver query start at once, then the compiler tests, the
const_data_ptr ABI compile and the ptxas query run side by side. The wall time is about that of
the slowest (the ABI compile, ~1 s), not the sum. In `check`, the ABI compile runs beside the
canaries instead, with the live probe (`LiveProbe`): no canary needs it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, TypeVar

from inductor_doctor.core.envvars import relevant_env
from inductor_doctor.core.facts import (
    AbiInfo,
    CompilerInfo,
    CudaInfo,
    Facts,
    PythonInfo,
)

__all__ = ["gather", "relevant_env", "Facts"]

T = TypeVar("T")

PROBE_TIMEOUT_S = 30.0


def _result(fut: Future[T], fallback: Callable[[str], T], notes: List[str], what: str) -> T:
    """A probe's answer; a probe that raised is a doctor bug, noted, never fatal."""
    try:
        return fut.result()
    except Exception as exc:
        msg = f"{what} probe failed: {type(exc).__name__}: {exc}"
        notes.append(msg)
        return fallback(msg)


def _runtime_hint(pkgs: Dict[str, str], torch_cuda: Optional[str]) -> Optional[str]:
    """The CUDA runtime torch ships: the nvidia-cuda-runtime wheel, else torch's build version."""
    for name in ("nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11",
                 "nvidia-cuda-runtime"):
        if name in pkgs:
            return pkgs[name]
    return torch_cuda


class LiveProbe:
    """The live probe (one `import torch` in the target), started at once and finished later.

    Its answer is kept by the static facts it depends on: `finish(facts)` cancels the running probe
    when a kept answer is still valid, else waits for it and keeps it if it completed. Started
    before anything else, it overlaps the rest of the probe and, in `check`, the canaries.
    """

    def __init__(self, python: str, timeout_s: float = 60.0) -> None:
        from inductor_doctor.probe import live as live_probe

        self.python = python
        self.cancel = threading.Event()
        self._kept: Optional[Dict[str, Any]] = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="indoc-live")
        self._future = self._pool.submit(live_probe.query, python, timeout_s, self.cancel)
        self._abi: Optional[Future[AbiInfo]] = None

    def defer_abi(self, job: Callable[[], AbiInfo]) -> None:
        """Run the const_data_ptr ABI compile beside the canaries too, and fold it in with the live
        facts: no canary reads it, and on a first run it is the slowest static probe (a second of
        cc1plus), which would otherwise hold back every canary."""
        self._abi = self._pool.submit(job)

    def kept(self, facts: Facts) -> bool:
        """Whether an answer kept for these static facts is still valid; if so the running probe is
        stopped at once (called as soon as the static facts are known)."""
        from inductor_doctor.probe import _diskcache
        from inductor_doctor.probe import live as live_probe

        if self._kept is None:
            found = _diskcache.get("live", live_probe.cache_key(facts, self.python))
            if found is not None and live_probe.complete(found):
                self._kept = found
                self.cancel.set()
        return self._kept is not None

    def finish(self, facts: Facts) -> None:
        """Fold the answer into `facts` (a kept one, or the fresh one)."""
        from inductor_doctor.probe import _diskcache
        from inductor_doctor.probe import live as live_probe

        notes: List[str] = []
        if self.kept(facts):
            answer = self._kept or {}
        else:
            key = live_probe.cache_key(facts, self.python)
            answer = _result(self._future, lambda m: {"probe_error": m}, notes, "live")
            if live_probe.complete(answer):
                _diskcache.put("live", key, answer)
        if self._abi is not None:
            facts.abi = _result(self._abi, lambda m: AbiInfo(stage="failed", error=m), notes, "ABI")
        self._pool.shutdown(wait=True)
        live_probe.merge(facts, answer)
        facts.python.notes.extend(notes)

    def stop(self) -> None:
        """Give up on it (an interrupt): the subprocess is killed, the thread ends within a grace."""
        self.cancel.set()
        self._pool.shutdown(wait=True)


def gather(
    python: Optional[str] = None,
    live: bool = False,
    timeout_s: float = 60.0,
    use_cache: Optional[bool] = None,
    live_probe: Optional[LiveProbe] = None,
) -> Facts:
    """Every fact the checks read. Never raises for a sick environment: gaps are recorded.

    `use_cache=False` re-asks the compilers instead of reusing answers remembered on disk for the
    same compiler binary, flags and torch files (`INDUCTOR_DOCTOR_NO_CACHE=1` does the same).
    With `live`, the live facts are folded in; a caller that wants to overlap them with other work
    passes its own started `LiveProbe` instead and calls `finish(facts)` itself.
    """
    from inductor_doctor.probe import (
        _diskcache,
        abi,
        caches,
        compile_settings,
        compiler,
        cuda,
        gpu_catalog,
        packages,
        ptxas,
        target,
        torch_build,
    )
    if use_cache is not None:
        _diskcache.set_enabled(use_cache)

    start = time.monotonic()
    python = python or sys.executable
    env = dict(os.environ)
    step = min(timeout_s, PROBE_TIMEOUT_S)
    notes: List[str] = []
    own_live = LiveProbe(python, timeout_s) if live and live_probe is None else None
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="indoc-probe") as ex:
        f_target = ex.submit(target.query, python, step)
        f_driver = ex.submit(cuda.driver_info, env)
        f_caches = ex.submit(caches.gather_caches, env)

        t: Dict[str, Any] = _result(f_target, lambda m: {"error": m}, notes, "target")
        pkgs = packages.packages(t)
        f_python = ex.submit(packages.python_info, python, t)
        torch_info = _result(ex.submit(torch_build.torch_info, t, pkgs), lambda m: None, notes, "torch")
        triton = packages.triton_info(t, pkgs)
        include = t.get("include_dir")

        # GPU/CUDA catalog (torch-gpu-arch-missing, cuda-libs-shadowed, cuda-toolkit-missing).
        f_gpu_catalog = ex.submit(gpu_catalog.static_facts, torch_info, t, env)
        f_abi: Optional[Future[AbiInfo]] = None
        if live_probe is not None:  # folded in by live_probe.finish(), beside the canaries
            live_probe.defer_abi(lambda: abi.check(torch_info, env))
        else:
            f_abi = ex.submit(abi.check, torch_info, env)
        f_cxx = ex.submit(compiler.inductor_cxx, include, env, step)
        f_cc = ex.submit(compiler.triton_cc_info, include, env, step)
        f_bundled = (
            ex.submit(cuda.ptxas_version, triton.bundled_ptxas) if triton and triton.bundled_ptxas else None
        )
        cuda_info: CudaInfo = _result(f_driver, lambda m: CudaInfo(notes=[m]), notes, "driver")
        cuda_info = _result(
            ex.submit(cuda.toolkit_info, cuda_info, env, str(t.get("machine") or ""),
                      triton.bundled_ptxas if triton else None),
            lambda m: cuda_info, notes, "CUDA toolkit",
        )
        cuda_info.runtime_version = _runtime_hint(pkgs, torch_info.cuda if torch_info else None)
        if triton is not None and f_bundled is not None:
            triton.bundled_ptxas_version = _result(f_bundled, lambda m: (None, None), notes, "ptxas")[0]

        facts = Facts(
            python=_result(f_python, lambda m: PythonInfo(executable=python, version="unknown", error=m),
                           notes, "python"),
            torch=torch_info,
            triton=triton,
            cuda=cuda_info,
            cxx=_result(f_cxx, lambda m: CompilerInfo(error=m), notes, "C++ compiler"),
            cc=_result(f_cc, lambda m: CompilerInfo(error=m), notes, "C compiler"),
            abi=(_result(f_abi, lambda m: AbiInfo(stage="failed", error=m), notes, "ABI")
                 if f_abi is not None else AbiInfo(stage="pending")),
            xla=packages.xla_info(t, pkgs),
            packages=pkgs,
            env=relevant_env(env),
            caches=_result(f_caches, lambda m: None, notes, "cache directories"),
            compile_settings=_result(
                ex.submit(compile_settings.gather, torch_info.path if torch_info else None, env, t),
                lambda m: None, notes, "compile settings"),
        )
        # GPU/CUDA catalog (cuda-devices-hidden and the above): gpus become the ones torch will see.
        gpu_catalog.fold(facts, _result(f_gpu_catalog, lambda m: gpu_catalog.Static(), notes,
                                        "GPU/CUDA catalog"), env)
        # Every ptxas Triton may run, asked about the GPUs torch will see.
        facts.cuda.ptxas_binaries = _result(ex.submit(ptxas.gather, triton, env, facts.cuda.gpus),
                                            lambda m: [], notes, "Triton's ptxas")
    facts.python.notes.extend(notes)
    if live_probe is not None:
        live_probe.kept(facts)  # a kept answer stops the running probe now, not when it is folded in
    if own_live is not None:
        own_live.finish(facts)
    facts.duration_s = time.monotonic() - start
    return facts
