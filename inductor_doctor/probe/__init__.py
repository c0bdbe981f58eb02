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
import re
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, TypeVar

from inductor_doctor.probe.facts import (
    AbiInfo,
    CompilerInfo,
    CudaInfo,
    Facts,
    PythonInfo,
)

__all__ = ["gather", "relevant_env", "Facts"]

T = TypeVar("T")

#: Environment variables that change what the compile stack does. Others (tokens, keys) are never
#: collected, so no report can leak them.
_ENV_EXACT = (
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LD_LIBRARY_PATH", "LD_PRELOAD",
    "PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "OMP_NUM_THREADS", "KMP_AFFINITY", "PJRT_DEVICE",
    "TPU_NUM_DEVICES", "GPU_NUM_DEVICES", "MAX_JOBS",
)
_ENV_PREFIXES = ("TORCH", "TRITON_", "XLA_", "PJRT_", "CUDA_", "NVIDIA_", "NCCL_", "CUDNN_", "PYTORCH_")
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH", re.IGNORECASE)

PROBE_TIMEOUT_S = 30.0


def relevant_env(environ: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    environ = dict(os.environ) if environ is None else environ
    out = {}
    for k, v in environ.items():
        if _SECRET.search(k):
            continue
        if k in _ENV_EXACT or k.startswith(_ENV_PREFIXES):
            out[k] = v
    return dict(sorted(out.items()))


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
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="indoc-probe") as ex:
        f_live = ex.submit(live_probe.query, python, timeout_s) if live else None
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
            answer = _result(f_live, lambda m: {"probe_error": m}, notes, "live")
            live_probe.merge(facts, answer)
    facts.python.notes.extend(notes)
    facts.duration_s = time.monotonic() - start
    return facts
