"""Toolchain facts, gathered without importing torch in this process.

`gather(python, live)` is the one entry point: static facts from package metadata, torch's own
files, ELF notes and symbols, the compilers' own answers and the driver's files; with `live`, one
short subprocess of the target interpreter adds what only a live torch knows.

The probes are a plan (`plan()`): each step is a `STEP = Step(...)` declaration in its own module
(`probe/<name>.py`) that says what it needs and produces one answer, and `run_plan` starts each as
soon as its needs are known, side by side on threads: the target interpreter's self-description
and the driver query start at once, then the compiler tests, the const_data_ptr ABI compile and
the ptxas query. The wall time is about that of the slowest (the ABI compile, ~1 s), not the sum.
The answers become one `Facts`, which nothing mutates afterwards.

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
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from inductor_doctor.core.codes import own_bug
from inductor_doctor.core.declare import declared
from inductor_doctor.core.envvars import relevant_env
from inductor_doctor.core.facts import AbiInfo, Facts
from inductor_doctor.probe.step import Step

__all__ = ["gather", "relevant_env", "Facts", "Step"]

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


class LiveProbe:
    """The live probe (one `import torch` in the target), started early and finished later.

    Its answer is kept by the static facts it depends on: `finish(facts)` cancels the running probe
    when a kept answer is still valid, else waits for it and keeps it if it completed. Where this
    interpreter has no kept answer yet it starts before anything else, and overlaps the rest of the
    probe and, in `check`, the canaries. Where it has one (a repeated check) it waits for the static
    facts, and starts only if they no longer match it: an `import torch` started and killed on every
    repeated check was most of its CPU, which a loaded node's other work needs.
    """

    def __init__(self, python: str, timeout_s: float = 60.0,
                 environ: Optional[Dict[str, str]] = None) -> None:
        from inductor_doctor.probe import _diskcache

        self.python = python
        self.timeout_s = timeout_s
        self.environ = environ
        self.cancel = threading.Event()
        self._kept: Optional[Dict[str, Any]] = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="indoc-live")
        self._future: Optional[Future[Dict[str, Any]]] = None
        self._abi: Optional[Future[AbiInfo]] = None
        if _diskcache.get("live-kept", [_diskcache.file_key(python), python]) is None:
            self._start()

    def _remember(self) -> None:
        """This interpreter has an answer kept: its next check waits for the static facts first."""
        from inductor_doctor.probe import _diskcache

        _diskcache.put("live-kept", [_diskcache.file_key(self.python), self.python], {"kept": True})

    def _start(self) -> Future[Dict[str, Any]]:
        from inductor_doctor.probe import live as live_probe

        if self._future is None:
            self._future = self._pool.submit(live_probe.query, self.python, self.timeout_s, self.cancel,
                                             self.environ)
        return self._future

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
                if self._future is not None:  # started for want of the hint: leave it for next time
                    self._remember()
            else:
                self._start()  # what was kept no longer holds: ask now
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
            answer = _result(self._start(), lambda m: {"probe_error": m}, notes, "live")
            if live_probe.complete(answer):
                _diskcache.put("live", key, answer)
                self._remember()
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


#: What a step may need that no step produces: the target interpreter, the environment the facts
#: are read under, a probe's time budget, and the live probe a `check` runs beside its canaries
#: (None elsewhere; the ABI compile is deferred to it).
GIVEN = ("python", "environ", "step", "live_probe")


@lru_cache(maxsize=1)
def plan() -> Tuple[Step, ...]:
    """Every probe step, each declared by its own module (a line `STEP = Step(...)` in
    `probe/<name>.py`, with what it needs: other steps' answers by name, or `GIVEN`): a new fact's
    probe joins the plan without a line here. A section of the facts is the answer of the step its
    declaration names (`probe=` in `core/facts.py`). Only the modules that declare one are imported;
    read once a process: the files are the package's own, and a check gathers facts more than once."""
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
    given = {"python": python, "environ": env, "step": min(timeout_s, PROBE_TIMEOUT_S),
             "live_probe": live_probe}
    answers, notes = run_plan(plan(), given)
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
