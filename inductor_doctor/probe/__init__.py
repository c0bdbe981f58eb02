"""Toolchain facts, gathered without importing torch in this process.

`gather(python, live)` is the one entry point: static facts from package metadata, torch's own
files, ELF notes and symbols, the compilers' own answers and the driver's files; with `live`, one
short subprocess of the target interpreter adds what only a live torch knows.

The probes are independent subprocesses and file reads, so they run on threads: the target
interpreter's self-description and the driver query start at once, then the compiler tests, the
const_data_ptr ABI compile and the ptxas query run side by side. The wall time is about that of
the slowest (the ABI compile, ~1 s), not the sum.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, TypeVar

from inductor_doctor.probe.env import relevant_env
from inductor_doctor.probe.facts import (
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


def _live_answer(fut: Future, cancel: threading.Event, facts: Facts, python: str,
                 notes: List[str]) -> Dict[str, Any]:
    """The live probe's answer: kept from an earlier run when the static facts it depends on are
    unchanged (the running probe is then cancelled), else the fresh one, kept if it completed."""
    from inductor_doctor.probe import _diskcache
    from inductor_doctor.probe import live as live_probe

    key = live_probe.cache_key(facts, python)
    kept = _diskcache.get("live", key)
    if kept is not None and live_probe.complete(kept):
        cancel.set()
        return kept
    answer = _result(fut, lambda m: {"probe_error": m}, notes, "live")
    if live_probe.complete(answer):
        _diskcache.put("live", key, answer)
    return answer


def gather(
    python: Optional[str] = None,
    live: bool = False,
    timeout_s: float = 60.0,
    use_cache: Optional[bool] = None,
) -> Facts:
    """Every fact the checks read. Never raises for a sick environment: gaps are recorded.

    `use_cache=False` re-asks the compilers instead of reusing answers remembered on disk for the
    same compiler binary, flags and torch files (`INDUCTOR_DOCTOR_NO_CACHE=1` does the same).
    """
    from inductor_doctor.probe import (
        _diskcache,
        abi,
        caches,
        compiler,
        cuda,
        gpu_catalog,
        packages,
        ptxas,
        target,
        torch_build,
    )
    from inductor_doctor.probe import live as live_probe

    if use_cache is not None:
        _diskcache.set_enabled(use_cache)

    start = time.monotonic()
    python = python or sys.executable
    env = dict(os.environ)
    step = min(timeout_s, PROBE_TIMEOUT_S)
    notes: List[str] = []
    cancel_live = threading.Event()
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="indoc-probe") as ex:
        # Started first (an `import torch` is the slowest step); cancelled if a kept answer fits.
        f_live = ex.submit(live_probe.query, python, timeout_s, cancel_live) if live else None
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
            abi=_result(f_abi, lambda m: AbiInfo(status="inconclusive", reason=m), notes, "ABI"),
            xla=packages.xla_info(t, pkgs),
            packages=pkgs,
            env=relevant_env(env),
            caches=_result(f_caches, lambda m: None, notes, "cache directories"),
        )
        # GPU/CUDA catalog (cuda-devices-hidden and the above): gpus become the ones torch will see.
        gpu_catalog.fold(facts, _result(f_gpu_catalog, lambda m: gpu_catalog.Static(), notes,
                                        "GPU/CUDA catalog"), env)
        # Every ptxas Triton may run, asked about the GPUs torch will see.
        facts.cuda.ptxas_binaries = _result(ex.submit(ptxas.gather, triton, env, facts.cuda.gpus),
                                            lambda m: [], notes, "Triton's ptxas")
        if f_live is not None:
            live_probe.merge(facts, _live_answer(f_live, cancel_live, facts, python, notes))
    facts.python.notes.extend(notes)
    facts.duration_s = time.monotonic() - start
    return facts
