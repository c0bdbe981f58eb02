"""`why`'s runs: the plan of variations, each run beside the others, and the torch releases.

The baseline (the command as it is) is run by the verb (`commands/why.py`); this module runs the
variations of `why/variations.py` in the order their answers are judged, `jobs` at a time, each in
its own process group with its own fresh caches and a timeout (`why/attempt.py`), and stops (killing
what still runs) as soon as the answer can no longer change, unless `--all` asks for every one. A
group of settings that decided is narrowed to the one setting; `--versions` tries other torch
releases in scratch venvs, one at a time. Nothing is concluded here: `why/conclude.py` reads the runs.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import Attempt, Launch, run_attempt
from inductor_doctor.why.signature import Signature

#: Statuses of one variation's run.
PASSED, SAME, OTHER, TIMED_OUT, NOT_RUN, STOPPED = (
    "passed", "fails the same way", "fails differently", "timed out", "not run", "stopped")


@dataclass
class Tried:
    """One variation and its run (None while queued, or never run)."""

    variation: V.Variation
    attempt: Optional[Attempt] = None
    status: str = NOT_RUN
    note: Optional[str] = None  # said in the conclusion (how a release was installed)

    def to_dict(self, scrub: Sequence[str]) -> Dict[str, Any]:
        d: Dict[str, Any] = self.variation.to_dict()
        d["status"] = self.status
        d["run"] = self.attempt.to_dict(scrub) if self.attempt is not None else None
        return d


@dataclass
class Session:
    """What every run of one `why` shares: the command, the user's environment (each run starts
    from it), the doctor's temporary directory, how many at once, the per-run timeout, the baseline
    its runs are compared with, and the paths scrubbed from what they print."""

    argv: List[str]
    user_env: Dict[str, str]
    root: str
    jobs: int
    timeout: float
    baseline: Attempt
    scrub: List[str] = field(default_factory=list)
    say: Callable[[str], None] = lambda message: None
    run_all: bool = False
    #: Set when `why` is interrupted: every run still going, in whatever thread, is killed.
    stop: threading.Event = field(default_factory=threading.Event)


def default_jobs() -> int:
    """Half the usable cores (a torch.compile run uses more than one), at least 1, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus // 2))


# --- the plan ----------------------------------------------------------------------------------


def user_caches(env: Dict[str, str]) -> List[str]:
    """The user's Inductor and Triton cache directories (whether they exist or not)."""
    from inductor_doctor.probe.compiler import _inductor_cache_dir

    triton = env.get("TRITON_CACHE_DIR") or os.path.join(env.get("TRITON_HOME") or os.path.expanduser("~"),
                                                         ".triton", "cache")
    return [_inductor_cache_dir(env), triton]


def plan(env: Dict[str, str], issue_ids: List[str]) -> List[V.Variation]:
    """The variations in the order their answers are judged."""
    caches = [d for d in user_caches(env) if os.path.isdir(d)]
    out = [V.fresh_caches(caches)]
    out += _issue_variations(issue_ids)
    out += V.settings_groups(env)
    out.append(V.compile_disabled())
    workers = V.workers_off(env)
    if workers is not None:
        out.append(workers)
    out += V.compilers(env)
    out += V.backends()
    keys, unique = set(), []
    for v in out:  # a matched issue's `export CXX=g++` and the compiler variation may coincide
        sig = (tuple(sorted(v.set_env.items())), tuple(sorted(v.unset_env)), v.backend, v.kind)
        if sig not in keys:
            keys.add(sig)
            unique.append(v)
    return unique


def _issue_variations(issue_ids: List[str]) -> List[V.Variation]:
    if not issue_ids:
        return []
    from inductor_doctor.fix.shell import env_effect
    from inductor_doctor.kb import registry

    issues = {i.id: i for i in registry()}
    out: List[V.Variation] = []
    for issue_id in issue_ids:
        issue = issues.get(issue_id)
        if issue is None:
            continue
        effects, commands = [], []
        for w in issue.workarounds:
            if w.kind == "env" and w.command:
                effect = env_effect(w.command) or _plain_export(w.command)
                if effect:
                    effects.append(effect)
                    commands.append(w.command)
        out += V.issue_workarounds(issue_id, effects, commands)
    return out


def _plain_export(command: str) -> Optional[Dict[str, Optional[str]]]:
    """`export A=value` with nothing for a shell to expand, read without one (the user's PATH may
    have no bash on it)."""
    found = re.fullmatch(r"\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=([^\s$`'\"\\;&|]+)\s*", command)
    return {found.group(1): found.group(2)} if found else None


# --- one run -----------------------------------------------------------------------------------


def workdir(root: str, name: str) -> str:
    path = os.path.join(root, name.replace("/", "_").replace(":", "_")[:80])
    os.makedirs(path, exist_ok=True)
    return path


def launch(session: Session, v: V.Variation, n: int) -> Launch:
    """The variation's environment: the user's, with its own fresh caches and this one change."""
    work = workdir(session.root, f"{n:02d}-{v.key}")
    env = {k: val for k, val in session.user_env.items() if k not in v.unset_env}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")
    env["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    env.update(v.set_env)
    mark = None
    extra = {}
    if v.backend or v.count_compiles or v.record_ops:
        site = os.path.join(work, "site")
        os.makedirs(site)
        from inductor_doctor.target import script

        shutil.copy(script("why_site.py"), os.path.join(site, "sitecustomize.py"))
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        mark = os.path.join(work, "compile-calls")
        env["INDUCTOR_DOCTOR_WHY_MARK"] = mark
        if v.backend:
            env["INDUCTOR_DOCTOR_WHY_BACKEND"] = v.backend
        if v.record_ops:
            extra["ops"] = env["INDUCTOR_DOCTOR_WHY_BISECT_LOG"] = os.path.join(work, "bisect-applications")
    return Launch(list(session.argv), env, work, session.timeout, mark, extra)


def status_of(attempt: Attempt, baseline: Signature, scrub: Sequence[str]) -> str:
    """A run counts by its signature only: passed, the baseline's failure, or another one."""
    if attempt.error:
        return STOPPED if attempt.error.startswith("stopped") else NOT_RUN
    if attempt.timed_out:
        return TIMED_OUT
    if attempt.passed:
        return PASSED
    return SAME if baseline.same_as(attempt.signature(scrub)) else OTHER


# --- the runs side by side -----------------------------------------------------------------------


def run_plan(session: Session, variations: List[V.Variation], offset: int = 0,
             run_all: Optional[bool] = None) -> List[Tried]:
    """Run the variations `jobs` at a time, in order; stop (killing what runs) once the answer is
    known, unless `run_all` (default: the session's `--all`)."""
    every = session.run_all if run_all is None else run_all
    baseline_line = session.baseline.signature(session.scrub)
    tried = [Tried(v) for v in variations]
    cancelled = threading.Event()
    pending: Dict[Future, int] = {}
    queue = list(range(len(variations)))
    jobs = session.jobs
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="indoc-why") as pool, \
            stopping(session, cancelled):
        while queue or pending:
            while queue and len(pending) < jobs and not cancelled.is_set():
                i = queue.pop(0)
                session.say(f"trying: {variations[i].label}")
                pending[pool.submit(run_attempt, launch(session, variations[i], offset + i), cancelled)] = i
            if not pending:
                break
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                tried[i].attempt = fut.result()
                tried[i].status = status_of(tried[i].attempt, baseline_line, session.scrub)
            if not every and not cancelled.is_set() and decided(tried):
                cancelled.set()
                queue.clear()
    return tried


@contextmanager
def stopping(session: Session, cancelled: Optional[threading.Event] = None) -> Iterator[None]:
    """Interrupted (Ctrl-C, SIGTERM): the runs of this plan and every other run of `why`, in whatever
    thread, are killed before a pool waits for them."""
    try:
        yield
    except BaseException:
        if cancelled is not None:
            cancelled.set()
        session.stop.set()
        raise


def narrow(session: Session, names: List[str]) -> List[Tried]:
    """A group of settings decided: which one of them."""
    single = V.single_settings(names)
    for v in single:
        v.key = "narrow-" + v.key
    return run_plan(session, single, offset=50, run_all=True)


def decided(tried: List[Tried]) -> bool:
    """Whether the conclusion can no longer change: a deciding variation with everything judged
    before it finished."""
    for t in tried:
        if t.status == NOT_RUN and t.attempt is None:
            return False  # still running or queued, and judged before anything later
        if decides(t):
            return True
    return False


def decides(t: Tried) -> bool:
    """An environment variation that passes names the cause; torch.compile disabled that still
    fails *the same way* says the error is the program's. A run that fails differently decides
    nothing (torch 2.13 refuses `fullgraph=True` with nothing compiled: another error, not the
    program's)."""
    kind = t.variation.kind
    if kind == V.ENVIRONMENT:
        return t.status == PASSED
    if kind == V.CONTROL:
        return t.status == SAME
    return False


# --- other torch releases (--versions) ------------------------------------------------------------


def installed_torch(session: Session) -> Tuple[Optional[str], Optional[str]]:
    """The command's interpreter and its torch version, or None where it has none."""
    from inductor_doctor.why import versions as R

    interpreter = R.interpreter_of(session.argv, session.user_env.get("PATH"))
    return interpreter, (R.torch_version(interpreter) if interpreter else None)


def run_releases(session: Session, interpreter: str, installed: str,
                 argv_for: Optional[Callable[[str], List[str]]] = None) -> List[Tried]:
    """The newest and the previous torch release, each in a scratch venv of the command's own
    interpreter, one at a time; `argv_for(python)` is the command with that interpreter (default: it
    in place of the first word)."""
    from inductor_doctor.core.releases import RELEASES
    from inductor_doctor.scratch.venv import ScratchError, ScratchVenv
    from inductor_doctor.why import versions as R

    line = session.baseline.signature(session.scrub)
    command_site = R.site_dirs(interpreter)
    out: List[Tried] = []
    for release, role in R.candidates(installed, RELEASES.get("torch", ())):
        req, index = R.requirement(release, installed), R.index_for(installed)
        v = V.Variation(f"torch:{release}", f"torch {release} ({role} release, in a scratch venv)", V.RELEASE,
                        workaround=R.pip_line(req, index), cause=role)
        t = Tried(v)
        out.append(t)
        session.say(f"trying: {v.label}")
        try:
            venv = ScratchVenv.create(interpreter, system_site_packages=True, parent=session.root)
        except ScratchError as exc:
            t.attempt = Attempt(None, 0.0, b"", 0, error=str(exc))
            continue
        try:
            trouble = R.see_site_dirs(str(venv.python), command_site)
            if trouble:
                t.attempt = Attempt(None, 0.0, b"", 0, error=trouble)
                continue
            if not _install(session, venv, t, release, req, index):
                continue
            release_launch = launch(session, v, 90 + len(out))
            release_launch.argv = (argv_for or (lambda py: [py, *session.argv[1:]]))(str(venv.python))
            t.attempt = run_attempt(release_launch)
            t.status = status_of(t.attempt, line, session.scrub)
        finally:
            venv.remove(force=True)
    return out


def _install(session: Session, venv: Any, t: Tried, release: str, req: str, index: Optional[str]) -> bool:
    """`req` into the venv (from pip's own index when `index` fails); False, with the reason in
    `t.attempt`, when neither installs."""
    from inductor_doctor.why import versions as R

    v = t.variation
    done = venv.install([req], index_url=index)
    if not done.ok and index is not None:  # that index unreachable or without it: pip's own index
        plain = f"torch=={release}"
        session.say(f"{req} could not be installed from {index}; trying {plain} from pip's own index")
        again = venv.install([plain])
        if again.ok:
            v.workaround = R.pip_line(plain, None)
            v.label = f"torch {release} ({v.cause} release from pip's own index, in a scratch venv)"
            t.note = (f"torch {release} came from pip's own index: {req} could not be installed "
                      f"({R.pip_error(done)}).")
            done = again
        else:
            t.attempt = Attempt(None, 0.0, b"", 0, error=(
                f"could not install {req} ({R.pip_error(done)}) nor {plain} from pip's own index "
                f"({R.pip_error(again)})"))
            return False
    if not done.ok:
        t.attempt = Attempt(None, 0.0, b"", 0, error=f"could not install {req}: {R.pip_error(done)}")
        return False
    return True
