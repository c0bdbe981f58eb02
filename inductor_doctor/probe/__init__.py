"""Toolchain facts, gathered without importing torch in this process.

`gather(python, live)` is the one entry point: static facts from package metadata, torch's own
files, ELF notes and symbols, the compilers' own answers and the driver's files; with `live`, one
short subprocess of the target interpreter adds what only a live torch knows.

The probes are a plan (`plan()`): each step declares what it needs and produces one answer, and
`run_plan` starts each as soon as its needs are known, side by side on threads: the target
interpreter's self-description and the driver query start at once, then the compiler tests, the
const_data_ptr ABI compile and the ptxas query. The wall time is about that of the slowest (the
ABI compile, ~1 s), not the sum. The answers become one `Facts`, which nothing mutates afterwards.

The late facts are a second, explicit stage: `LiveProbe.finish(facts)` returns a new `Facts` with
the live answer and, in `check`, the ABI compile, which runs beside the canaries instead (no canary
needs it).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from inductor_doctor.core.codes import own_bug
from inductor_doctor.core.declare import declared
from inductor_doctor.core.envvars import relevant_env
from inductor_doctor.core.facts import (
    AbiInfo,
    CompilerInfo,
    CudaInfo,
    Facts,
    PythonInfo,
    TorchInfo,
    TritonInfo,
)

__all__ = ["gather", "relevant_env", "Facts"]

T = TypeVar("T")

PROBE_TIMEOUT_S = 30.0


def _result(fut: Future[T], fallback: Callable[[str], T], notes: List[str], what: str) -> T:
    """A probe's answer; a probe that met a machine it did not expect is noted, never fatal. A
    mistake in the doctor's own code (`core.codes.own_bug`) is not the machine's: it propagates, and
    the command ends as the doctor's failure (exit 3) instead of reporting facts it never read."""
    try:
        return fut.result()
    except Exception as exc:
        if own_bug(exc):
            raise
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

    def __init__(self, python: str, timeout_s: float = 60.0,
                 environ: Optional[Dict[str, str]] = None) -> None:
        from inductor_doctor.probe import live as live_probe

        self.python = python
        self.cancel = threading.Event()
        self._kept: Optional[Dict[str, Any]] = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="indoc-live")
        self._future = self._pool.submit(live_probe.query, python, timeout_s, self.cancel, environ)
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

    def finish(self, facts: Facts) -> Facts:
        """The whole facts: a NEW snapshot with the live answer (a kept one, or the fresh one) and
        the deferred ABI compile in it; `facts` itself is left as it was."""
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
        abi = facts.abi
        if self._abi is not None:
            abi = _result(self._abi, lambda m: AbiInfo(stage="failed", error=m), notes, "ABI")
        self._pool.shutdown(wait=True)
        whole = live_probe.merged(replace(facts, abi=abi), answer)
        whole.python.notes.extend(notes)
        return whole

    def stop(self) -> None:
        """Give up on it (an interrupt): the subprocess is killed, the thread ends within a grace."""
        self.cancel.set()
        self._pool.shutdown(wait=True)


# --- the plan: each probe, what it needs and what it produces ---------------------------------------


@dataclass(frozen=True)
class Step:
    """One probe in the plan: `run` gets the answers it `needs` (by name) and produces `name`.

    `fallback(message, answers)` is its answer when it met a machine it did not expect (noted, never
    fatal; a mistake in the doctor's own code propagates, `_result`), from the message and the answers
    known so far; `what` names it in that note.
    """

    name: str
    needs: Tuple[str, ...]
    run: Callable[..., Any]
    fallback: Callable[[str, Dict[str, Any]], Any] = lambda m, known: None
    what: str = ""


def _cuda_static(toolkit_cuda: CudaInfo, pkgs: Dict[str, str], torch_info: Optional[TorchInfo],
                 catalog: Any, env: Dict[str, str]) -> Tuple[CudaInfo, Optional[TorchInfo]]:
    """The driver's and toolkit's answers with the GPUs torch will see, and torch with its arch
    list: new sections, the probes' own answers untouched (another probe may still read them)."""
    from inductor_doctor.probe import gpu_catalog

    runtime = _runtime_hint(pkgs, torch_info.cuda if torch_info else None)
    cuda_info = replace(toolkit_cuda, runtime_version=runtime)
    return gpu_catalog.fold(cuda_info, torch_info, catalog, env)


def plan(live_probe: Optional[LiveProbe] = None) -> Tuple[Step, ...]:
    """Every static probe, declared with what it needs: `python`, `environ` (the environment) and `step`
    (a probe's time budget) are given, the rest are other steps' answers; a section of the facts is
    the answer of the step its declaration names (`probe=` in `core/facts.py`). With a `live_probe`,
    the ABI compile is deferred to it (it runs beside the canaries) and the first facts say it is
    pending."""
    from inductor_doctor.probe import (
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

    def abi_now(torch_info: Optional[TorchInfo], env: Dict[str, str]) -> AbiInfo:
        if live_probe is None:
            return abi.check(torch_info, env)
        live_probe.defer_abi(lambda: abi.check(torch_info, env))
        return AbiInfo(stage="pending")

    def bundled(triton: Optional[TritonInfo]) -> Optional[TritonInfo]:
        if triton is None or not triton.bundled_ptxas:
            return triton
        return replace(triton, bundled_ptxas_version=cuda.ptxas_version(triton.bundled_ptxas)[0])

    return (
        Step("target", ("python", "step", "environ"), target.query, lambda m, known: {"error": m}, "target"),
        Step("driver", ("environ",), cuda.driver_info, lambda m, known: CudaInfo(notes=[m]), "driver"),
        Step("caches", ("environ",), caches.gather_caches, what="cache directories"),
        Step("env", ("environ",), relevant_env),
        Step("packages", ("target",), packages.packages, lambda m, known: {}, "packages"),
        Step("python", ("python", "target"), packages.python_info,
             lambda m, known: PythonInfo(executable=known["python"], version="unknown", error=m), "python"),
        Step("torch_files", ("target", "packages"), torch_build.torch_info, what="torch"),
        Step("triton_installed", ("target", "packages"), packages.triton_info),
        Step("xla", ("target", "packages"), packages.xla_info),
        Step("gpu_catalog", ("torch_files", "target", "environ"), gpu_catalog.static_facts,
             lambda m, known: gpu_catalog.Static(), "GPU/CUDA catalog"),
        Step("toolkit", ("gpu_catalog",), lambda static: static.toolkit),
        Step("abi", ("torch_files", "environ"), abi_now, lambda m, known: AbiInfo(stage="failed", error=m),
             "ABI"),
        Step("cxx", ("target", "environ", "step"), lambda t, env, step: compiler.inductor_cxx(
            t.get("include_dir"), env, step), lambda m, known: CompilerInfo(error=m), "C++ compiler"),
        Step("cc", ("target", "environ", "step"), lambda t, env, step: compiler.triton_cc_info(
            t.get("include_dir"), env, step), lambda m, known: CompilerInfo(error=m), "C compiler"),
        Step("triton", ("triton_installed",), bundled, lambda m, known: known["triton_installed"], "ptxas"),
        Step("toolkit_cuda", ("driver", "environ", "target", "triton_installed"),
             lambda info, env, t, tr: cuda.toolkit_info(info, env, str(t.get("machine") or ""),
                                                        tr.bundled_ptxas if tr else None),
             lambda m, known: known["driver"], "CUDA toolkit"),
        Step("compile_settings", ("torch_files", "environ", "target"),
             lambda torch_info, env, t: compile_settings.gather(
                 torch_info.path if torch_info else None, env, t),
             what="compile settings"),
        Step("catalog", ("toolkit_cuda", "packages", "torch_files", "gpu_catalog", "environ"), _cuda_static,
             lambda m, known: (known["toolkit_cuda"], known["torch_files"]), "GPU/CUDA catalog"),
        Step("torch", ("catalog",), lambda catalog: catalog[1]),
        # Every ptxas Triton may run, asked about the GPUs torch will see.
        Step("ptxas_binaries", ("triton", "environ", "catalog"),
             lambda tr, env, catalog: ptxas.gather(tr, env, catalog[0].gpus), lambda m, known: [],
             "Triton's ptxas"),
        Step("cuda", ("catalog", "ptxas_binaries"),
             lambda catalog, found: replace(catalog[0], ptxas_binaries=found),
             lambda m, known: known["catalog"][0]),
        *contributed(),
    )


@lru_cache(maxsize=1)
def contributed() -> Tuple[Step, ...]:
    """The steps probe modules declare themselves (a line `STEP = Step(...)` in `probe/<name>.py`):
    a new fact's probe joins the plan without a line here. Only the modules that declare one are
    imported (the others load when a step needs them, as before). Read once a process: the files
    are the package's own, and a check gathers facts more than once."""
    import importlib

    folder = os.path.dirname(os.path.abspath(__file__))
    out = []
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".py") or entry.startswith("_"):
            continue
        try:
            with open(os.path.join(folder, entry), encoding="utf-8") as f:
                declares = any(line.startswith("STEP = ") for line in f)
        except OSError:
            continue
        if declares:
            step = getattr(importlib.import_module(f"{__name__}.{entry[:-3]}"), "STEP", None)
            if isinstance(step, Step):
                out.append(step)
    return tuple(out)


def run_plan(steps: Sequence[Step], given: Dict[str, Any],
             workers: int = 8) -> Tuple[Dict[str, Any], List[str]]:
    """Every step, each as soon as what it needs is known, side by side on threads: (the answers,
    the notes of the steps that failed, in the plan's order)."""
    answers = dict(given)
    failed: Dict[str, str] = {}
    todo = list(steps)
    running: Dict[Future[Any], Step] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="indoc-probe") as ex:
        while todo or running:
            for step in [s for s in todo if all(n in answers for n in s.needs)]:
                todo.remove(step)
                running[ex.submit(step.run, *(answers[n] for n in step.needs))] = step
            if not running:
                raise ValueError(f"probe steps with needs nothing produces: {[s.name for s in todo]}")
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                step = running.pop(fut)
                notes: List[str] = []
                answers[step.name] = _result(fut, lambda m, step=step: step.fallback(m, answers), notes,
                                             step.what or step.name)
                if notes:
                    failed[step.name] = notes[0]
    return answers, [failed[s.name] for s in steps if s.name in failed]


def gather(
    python: Optional[str] = None,
    live: bool = False,
    timeout_s: float = 60.0,
    use_cache: Optional[bool] = None,
    live_probe: Optional[LiveProbe] = None,
    environ: Optional[Dict[str, str]] = None,
) -> Facts:
    """Every fact the checks read, as one snapshot nothing mutates afterwards. Never raises for a
    sick environment: gaps are recorded. `environ` is the environment the facts are read under
    (this process's by default; a check's request may change it, as `fix` does to try a workaround).

    `use_cache=False` re-asks the compilers instead of reusing answers remembered on disk for the
    same compiler binary, flags and torch files (`INDUCTOR_DOCTOR_NO_CACHE=1` does the same).
    With `live`, the live facts are folded in; a caller that wants to overlap them with other work
    passes its own started `LiveProbe` instead and gets the whole facts from `finish(facts)`.
    """
    from inductor_doctor.probe import _diskcache

    if use_cache is not None:
        _diskcache.set_enabled(use_cache)

    start = time.monotonic()
    python = python or sys.executable
    env = dict(os.environ if environ is None else environ)
    own_live = LiveProbe(python, timeout_s, env) if live and live_probe is None else None
    given = {"python": python, "environ": env, "step": min(timeout_s, PROBE_TIMEOUT_S)}
    answers, notes = run_plan(plan(live_probe), given)
    # Each section from the step its declaration names; the live ones come in the second stage.
    sections = {f.name: answers[declared(f).probe] for f in dataclasses.fields(Facts)
                if declared(f).probe in answers and declared(f).cost != "live"}
    python_info = sections["python"]
    sections["python"] = replace(python_info, notes=python_info.notes + notes)
    facts = Facts(**sections)
    if live_probe is not None:
        live_probe.kept(facts)  # a kept answer stops the running probe now, not when it is folded in
    if own_live is not None:
        facts = own_live.finish(facts)
    return replace(facts, duration_s=time.monotonic() - start)
