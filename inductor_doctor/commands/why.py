"""`inductor-doctor why -- CMD ...`: which controlled variation flips a failing command.

PyTorch's troubleshooting guide localises a torch.compile failure by hand: clear the caches, try
another compiler, drop your settings, step the backend down from Inductor to `aot_eager` to `eager`.
`why` does it: it runs the command once as it is (the baseline, which must fail; its output is
triaged), then re-runs it under the variations of `why/variations.py`, each in its own process
group with its own fresh caches and a timeout, several at once (bounded by the cores), and stops
as soon as the answer is known unless `--all` asks for every one.

The answer is decided in the variations' order, never by which finished first: an environment
variation that makes the command pass names the cause and proves its workaround, unless one before
it in the order already did; torch.compile disabled that still fails says the error is not the
compiler's; otherwise the backend step-down names the layer that fails (Dynamo, AOTAutograd,
Inductor); and when nothing changes the outcome, the conclusion says so plainly. Nothing the user
owns is changed: every re-run's caches and the step-down's `sitecustomize` live in the doctor's
temporary directory, removed at the end.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.core.codes import UsageError
from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import Attempt, Launch, run_attempt

SCHEMA = "inductor-doctor/why/v1"
#: Statuses of one variation's run.
PASSED, SAME, OTHER, TIMED_OUT, NOT_RUN, STOPPED = (
    "passed", "fails the same way", "fails differently", "timed out", "not run", "stopped")


@dataclass
class WhyRequest:
    argv: List[str]
    run_all: bool = False
    jobs: Optional[int] = None
    timeout_s: Optional[float] = None  # per run; default from the baseline's duration
    report: Optional[str] = None
    versions: bool = False  # also other torch releases, in scratch venvs (why/versions.py)


@dataclass
class Tried:
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
class WhyDocument:
    argv: List[str]
    baseline: Attempt
    triage: Dict[str, Any]
    tried: List[Tried]
    conclusion: Dict[str, Any]
    jobs: int
    timeout_s: float
    duration_s: float
    scrub: List[str] = field(default_factory=list)
    report: Optional[str] = None
    report_document: Any = None  # what --report FILE gets (the CLI renders it)
    command: str = "why"

    @property
    def decided(self) -> bool:
        return self.conclusion["kind"] not in ("none", "baseline-passed")

    def to_dict(self) -> Dict[str, Any]:
        from inductor_doctor.core.version import __version__
        from inductor_doctor.kb import KB_VERSION

        runs = sum(t.attempt is not None and t.status != STOPPED for t in self.tried)
        return {
            "schema": SCHEMA,
            "tool_version": __version__,
            "kb_version": KB_VERSION,
            "command_line": shlex.join(self.argv),
            "baseline": self.baseline.to_dict(self.scrub),
            "triage": self.triage,
            "variations": [t.to_dict(self.scrub) for t in self.tried],
            "conclusion": self.conclusion,
            "report": self.report,
            "meta": {"jobs": self.jobs, "timeout_s": self.timeout_s, "duration_s": round(self.duration_s, 2),
                     "runs": 1 + runs, "variations": len(self.tried)},
        }


def default_jobs() -> int:
    """Half the usable cores (a torch.compile run uses more than one), at least 1, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus // 2))


def why(request: WhyRequest, progress: Any = None) -> WhyDocument:
    """Baseline, then the variations; the conclusion in their order."""
    if not request.argv:
        raise UsageError("why needs a command after --, e.g. inductor-doctor why -- python repro.py")
    start = time.monotonic()
    say = progress or (lambda message: None)
    root = tempfile.mkdtemp(prefix="inductor-doctor-why-")
    try:
        return _why(request, root, say, start)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _why(request: WhyRequest, root: str, say: Any, start: float) -> WhyDocument:
    from inductor_doctor.triage.diagnosis import matched_ids, summary, triage_output

    user_env = dict(os.environ)
    jobs = request.jobs or default_jobs()
    say(f"baseline: {shlex.join(request.argv)}")
    base_dir = _workdir(root, "baseline")
    baseline = run_attempt(Launch(list(request.argv), user_env, base_dir, request.timeout_s or 3600.0))
    if baseline.error:
        raise UsageError(f"{request.argv[0]}: {baseline.error}")
    scrub = [root]
    result = triage_output(baseline.output, "baseline output") if not baseline.passed else None
    found = summary(result)
    timeout = request.timeout_s or max(120.0, 4 * baseline.duration_s)
    if baseline.passed:
        conclusion = {"kind": "baseline-passed", "sentence": (
            f"The command succeeded here (exit 0 in {baseline.duration_s:.1f}s): there is no failure to "
            "diagnose. A failure that comes and goes points at the caches or the machine's load; run "
            "`inductor-doctor check`."), "workaround": None, "evidence": [], "variation": None}
        return WhyDocument(list(request.argv), baseline, found, [], conclusion, jobs, timeout,
                           time.monotonic() - start, scrub)
    plan = _plan(user_env, matched_ids(result, 1))
    tried = _run_all(plan, request, user_env, root, jobs, timeout, baseline, scrub, say)
    conclusion = conclude(baseline, tried, scrub, found)
    if (conclusion["kind"] == "environment" and conclusion["variation"].startswith("unset:")
            and len(conclusion["unset"]) > 1):
        tried += _narrow(conclusion["unset"], request, user_env, root, jobs, timeout, baseline, scrub, say)
        conclusion = conclude(baseline, tried, scrub, found)
    if request.versions:
        releases, conclusion = _versions(request, user_env, root, timeout, baseline, scrub, say, conclusion)
        tried += releases
    document = WhyDocument(list(request.argv), baseline, found, tried, conclusion, jobs, timeout,
                           time.monotonic() - start, scrub, request.report)
    if request.report:
        from inductor_doctor.commands.run import report_of

        document.report_document = report_of(baseline.output)
    return document


def _versions(request: WhyRequest, user_env: Dict[str, str], root: str, timeout: float, baseline: Attempt,
              scrub: List[str], say: Any, conclusion: Dict[str, Any]) -> Any:
    """Other torch releases, when the answer is still in the compiler (a layer, or nothing found), or
    with --all; each in a scratch venv of the command's own interpreter, one at a time."""
    from inductor_doctor.why import versions as R

    if conclusion["kind"] not in ("layer", "none") and not request.run_all:
        conclusion["versions"] = "not tried: the cause is found without another torch release"
        return [], conclusion
    interpreter = R.interpreter_of(request.argv, user_env.get("PATH"))
    installed = R.torch_version(interpreter) if interpreter else None
    if interpreter is None or installed is None:
        conclusion["versions"] = ("not tried: the command does not start with a Python interpreter that has "
                                  "torch (`python repro.py` can be re-run with another torch)")
        return [], conclusion
    from inductor_doctor.core.releases import RELEASES
    from inductor_doctor.scratch.venv import ScratchError, ScratchVenv

    line = baseline.fingerprint(scrub)
    command_site = R.site_dirs(interpreter)
    out: List[Tried] = []
    for release, role in R.candidates(installed, RELEASES.get("torch", ())):
        req, index = R.requirement(release, installed), R.index_for(installed)
        v = V.Variation(f"torch:{release}", f"torch {release} ({role} release, in a scratch venv)", V.RELEASE,
                        workaround=R.pip_line(req, index), cause=role)
        t = Tried(v)
        out.append(t)
        say(f"trying: {v.label}")
        try:
            venv = ScratchVenv.create(interpreter, system_site_packages=True, parent=root)
        except ScratchError as exc:
            t.attempt = Attempt(None, 0.0, b"", 0, error=str(exc))
            continue
        try:
            trouble = R.see_site_dirs(str(venv.python), command_site)
            if trouble:
                t.attempt = Attempt(None, 0.0, b"", 0, error=trouble)
                continue
            done = venv.install([req], index_url=index)
            if not done.ok and index is not None:  # that index unreachable or without it: pip's own index
                plain = f"torch=={release}"
                say(f"{req} could not be installed from {index}; trying {plain} from pip's own index")
                again = venv.install([plain])
                if again.ok:
                    v.workaround = R.pip_line(plain, None)
                    v.label = f"torch {release} ({role} release from pip's own index, in a scratch venv)"
                    t.note = (f"torch {release} came from pip's own index: {req} could not be installed "
                              f"({R.pip_error(done)}).")
                    done = again
                else:
                    t.attempt = Attempt(None, 0.0, b"", 0, error=(
                        f"could not install {req} ({R.pip_error(done)}) nor {plain} from pip's own index "
                        f"({R.pip_error(again)})"))
                    continue
            if not done.ok:
                t.attempt = Attempt(None, 0.0, b"", 0, error=f"could not install {req}: {R.pip_error(done)}")
                continue
            launch = _launch(v, request.argv, user_env, root, 90 + len(out), timeout)
            launch.argv = [str(venv.python), *request.argv[1:]]
            t.attempt = run_attempt(launch)
            t.status = _status(t.attempt, line, scrub)
        finally:
            venv.remove(force=True)
    return out, _release_conclusion(conclusion, out, installed)


def _release_conclusion(conclusion: Dict[str, Any], tried: List[Tried], installed: str) -> Dict[str, Any]:
    by_role = {t.variation.cause: t for t in tried}
    newest, previous = by_role.get("newest"), by_role.get("previous")
    out = dict(conclusion)
    if newest is not None and newest.status == PASSED:
        release = newest.variation.key.split(":", 1)[1]
        out.update(kind="release", variation=newest.variation.key, workaround=newest.variation.workaround,
                   sentence=f"Fixed in torch {release}: the command passes with it (in a scratch venv) and "
                            f"fails with torch {installed}; the workaround, proved here: "
                            f"`{newest.variation.workaround}`." + (f" {newest.note}" if newest.note else ""))
        out["evidence"] = [*conclusion["evidence"], f"{newest.variation.label}: passes"]
        return out
    extra = []
    for t in (newest, previous):
        if t is not None and t.attempt is not None and t.attempt.error and t.status == NOT_RUN:
            release = t.variation.key.split(":", 1)[1]
            extra.append(f"torch {release} ({t.variation.cause} release) could not be tried here: "
                         f"{t.attempt.error}.")
    if newest is None or newest.status in (SAME, OTHER):
        which = newest.variation.key.split(":", 1)[1] if newest is not None else installed.split("+")[0]
        extra.append(f"It is present in the newest release (torch {which}): report it upstream "
                     "(`--report FILE` writes the report block).")
        out["upstream"] = True
    extra += [t.note for t in tried if t.note and t.status != NOT_RUN]
    if previous is not None and previous.status == PASSED:
        release = previous.variation.key.split(":", 1)[1]
        extra.append(f"It is new in torch {installed.split('+')[0]}: torch {release} passes (a regression).")
    elif previous is not None and previous.status in (SAME, OTHER):
        release = previous.variation.key.split(":", 1)[1]
        extra.append(f"torch {release} fails too: it is not new in this release.")
    if extra:
        out["sentence"] = conclusion["sentence"] + " " + " ".join(extra)
        out["evidence"] = [*conclusion["evidence"], *(f"{t.variation.label}: {t.status}" for t in tried)]
    return out


def _plan(env: Dict[str, str], issue_ids: List[str]) -> List[V.Variation]:
    """The variations in the order their answers are judged."""
    from inductor_doctor.probe.compiler import _inductor_cache_dir

    triton = env.get("TRITON_CACHE_DIR") or os.path.join(env.get("TRITON_HOME") or os.path.expanduser("~"),
                                                         ".triton", "cache")
    caches = [d for d in (_inductor_cache_dir(env), triton) if os.path.isdir(d)]
    plan = [V.fresh_caches(caches)]
    plan += _issue_variations(issue_ids)
    plan += V.settings_groups(env)
    plan.append(V.compile_disabled())
    workers = V.workers_off(env)
    if workers is not None:
        plan.append(workers)
    plan += V.compilers(env)
    plan += V.backends()
    keys, out = set(), []
    for v in plan:  # a matched issue's `export CXX=g++` and the compiler variation may coincide
        sig = (tuple(sorted(v.set_env.items())), tuple(sorted(v.unset_env)), v.backend, v.kind)
        if sig not in keys:
            keys.add(sig)
            out.append(v)
    return out


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
    import re

    found = re.fullmatch(r"\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=([^\s$`'\"\\;&|]+)\s*", command)
    return {found.group(1): found.group(2)} if found else None


def _workdir(root: str, name: str) -> str:
    path = os.path.join(root, name.replace("/", "_").replace(":", "_")[:80])
    os.makedirs(path, exist_ok=True)
    return path


def _launch(v: V.Variation, argv: List[str], user_env: Dict[str, str], root: str, n: int,
            timeout: float) -> Launch:
    """The variation's environment: the user's, with its own fresh caches and this one change."""
    work = _workdir(root, f"{n:02d}-{v.key}")
    env = {k: val for k, val in user_env.items() if k not in v.unset_env}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")
    env["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    env.update(v.set_env)
    mark = None
    if v.backend or v.count_compiles:
        site = os.path.join(work, "site")
        os.makedirs(site)
        from inductor_doctor.target import script

        shutil.copy(script("why_site.py"), os.path.join(site, "sitecustomize.py"))
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        mark = os.path.join(work, "compile-calls")
        env["INDUCTOR_DOCTOR_WHY_MARK"] = mark
        if v.backend:
            env["INDUCTOR_DOCTOR_WHY_BACKEND"] = v.backend
    return Launch(list(argv), env, work, timeout, mark)


def _status(attempt: Attempt, baseline_line: str, scrub: Sequence[str]) -> str:
    if attempt.error:
        return STOPPED if attempt.error.startswith("stopped") else NOT_RUN
    if attempt.timed_out:
        return TIMED_OUT
    if attempt.passed:
        return PASSED
    return SAME if attempt.fingerprint(scrub) == baseline_line else OTHER


def _run_all(plan: List[V.Variation], request: WhyRequest, user_env: Dict[str, str], root: str, jobs: int,
             timeout: float, baseline: Attempt, scrub: List[str], say: Any, offset: int = 0) -> List[Tried]:
    """Run the plan `jobs` at a time, in order; stop (killing what runs) once the answer is known."""
    baseline_line = baseline.fingerprint(scrub)
    tried = [Tried(v) for v in plan]
    cancelled = threading.Event()
    pending: Dict[Future, int] = {}
    queue = list(range(len(plan)))
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="indoc-why") as pool:
        while queue or pending:
            while queue and len(pending) < jobs and not cancelled.is_set():
                i = queue.pop(0)
                say(f"trying: {plan[i].label}")
                launch = _launch(plan[i], request.argv, user_env, root, offset + i, timeout)
                pending[pool.submit(run_attempt, launch, cancelled)] = i
            if not pending:
                break
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                tried[i].attempt = fut.result()
                tried[i].status = _status(tried[i].attempt, baseline_line, scrub)
            if not request.run_all and not cancelled.is_set() and decided(tried):
                cancelled.set()
                queue.clear()
    return tried


def _narrow(names: List[str], request: WhyRequest, user_env: Dict[str, str], root: str, jobs: int,
            timeout: float, baseline: Attempt, scrub: List[str], say: Any) -> List[Tried]:
    """A group of settings decided: which one of them."""
    single = V.single_settings(names)
    for v in single:
        v.key = "narrow-" + v.key
    return _run_all(single, WhyRequest(request.argv, run_all=True), user_env, root, jobs, timeout, baseline,
                    scrub, say, offset=50)


def decided(tried: List[Tried]) -> bool:
    """Whether the conclusion can no longer change: a deciding variation with everything judged
    before it finished."""
    for t in tried:
        if t.status == NOT_RUN and t.attempt is None:
            return False  # still running or queued, and judged before anything later
        if _decides(t):
            return True
    return False


def _decides(t: Tried) -> bool:
    kind = t.variation.kind
    if kind == V.ENVIRONMENT:
        return t.status == PASSED
    if kind == V.CONTROL:
        return t.status in (SAME, OTHER)
    return False


def conclude(baseline: Attempt, tried: List[Tried], scrub: Sequence[str],
             triage: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """One sentence with its evidence, from the variations in their order."""
    base = baseline.fingerprint(scrub)
    evidence = [f"as it is: exit {baseline.returncode} in {baseline.duration_s:.1f}s: {base}"]
    narrowed = [t for t in tried if t.variation.key.startswith("narrow-") and t.status == PASSED]
    for t in tried:
        if t.variation.key.startswith("narrow-"):
            continue
        if t.status == NOT_RUN and t.attempt is None:
            break
        if not _decides(t):
            continue
        v = t.variation
        assert t.attempt is not None
        if v.kind == V.ENVIRONMENT:
            unset = list(v.unset_env)
            workaround, cause = v.workaround, v.cause
            if narrowed and v.key.startswith("unset:"):
                unset = list(narrowed[0].variation.unset_env)
                workaround = narrowed[0].variation.workaround
                cause = narrowed[0].variation.cause.replace("your setting", "your setting")
            evidence.append(f"{v.label}: passes (exit 0 in {t.attempt.duration_s:.1f}s)")
            evidence += _others(tried, t)
            proved = f"; the workaround, proved here: `{workaround}`." if workaround else "."
            return {"kind": "environment", "variation": v.key, "unset": unset, "issue": v.issue,
                    "sentence": f"The cause is {cause}: the command passes {_with(v.label)}{proved}",
                    "workaround": workaround, "evidence": evidence}
        line = t.attempt.fingerprint(scrub)
        how = "the same error" if t.status == SAME else f"another error ({line})"
        evidence.append(f"{v.label}: fails with {how}")
        return {"kind": "program", "variation": v.key, "unset": [], "issue": None,
                "sentence": "It fails with torch.compile disabled too: the error is in the program (or in "
                            "torch itself), not in the compiler stack; no variation of the compiler can "
                            "fix it.",
                "workaround": None, "evidence": evidence}
    return _layer(tried, evidence, scrub, triage)



def _with(label: str) -> str:
    """A variation's label after "passes": "with fresh caches", "without your settings (CXX)"."""
    return label if label.startswith(("with ", "without ")) else f"with {label}"

def _others(tried: List[Tried], winner: Tried) -> List[str]:
    """What else was tried before the winner, briefly: the evidence that it is this and not those."""
    out = []
    for t in tried:
        if t is winner:
            break
        if t.attempt is not None and t.status not in (STOPPED, NOT_RUN):
            out.append(f"{t.variation.label}: {t.status}")
    return out[:6]


def _layer(tried: List[Tried], evidence: List[str], scrub: Sequence[str],
           triage: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """No environment variation decided: which backend layer fails, if the step-down says."""
    by_key = {t.variation.key: t for t in tried}
    disabled, eager, aot = (by_key.get(k) for k in ("compile-disabled", "backend:eager", "backend:aot_eager"))
    for t in tried:
        if t.attempt is not None and t.status not in (STOPPED, NOT_RUN) and t.variation.kind != V.LAYER:
            evidence.append(f"{t.variation.label}: {t.status}")
    ran = [t for t in (eager, aot) if t is not None and t.attempt is not None and t.status != STOPPED]
    calls = [t.attempt.compile_calls for t in ran if t.attempt is not None]
    if disabled is not None and disabled.status == PASSED and ran:
        for t in ran:
            evidence.append(f"{t.variation.label}: {t.status}")
        if calls and all(c == 0 for c in calls):
            return _none(evidence, "the program never calls torch.compile, so the backend could not be "
                                   "stepped down")
        if eager is not None and eager.status in (SAME, OTHER):
            return _layer_answer("dynamo", "backend:eager", "Dynamo (graph capture)",
                                 'backend="eager" fails too', None, evidence)
        if aot is not None and aot.status in (SAME, OTHER) and eager is not None and eager.status == PASSED:
            return _layer_answer("aot_autograd", "backend:aot_eager", "AOTAutograd (the traced joint graph)",
                                 'backend="eager" passes and backend="aot_eager" fails',
                                 'torch.compile(..., backend="eager")', evidence)
        if aot is not None and aot.status == PASSED:
            answer = _layer_answer("inductor", "backend:aot_eager",
                                   "Inductor (code generation and its compilers)",
                                   'backend="aot_eager" passes', 'torch.compile(..., backend="aot_eager")',
                                   evidence)
            if triage and triage.get("matched"):
                answer["sentence"] += (f" Its output matches {triage['id']} ({triage['confidence']}): "
                                       f"`{triage['explain']}`.")
            return answer
    return _none(evidence, None)


def _layer_answer(layer: str, variation: str, name: str, because: str, workaround: Optional[str],
                  evidence: List[str]) -> Dict[str, Any]:
    sentence = (f"No setting of this machine explains it: the failure is in {name}, since {because} "
                "(and the program passes with torch.compile disabled)")
    sentence += f"; until it is fixed, {workaround} avoids it." if workaround else "."
    return {"kind": "layer", "layer": layer, "variation": variation, "unset": [], "issue": None,
            "sentence": sentence, "workaround": workaround, "evidence": evidence}


def _none(evidence: List[str], why_not: Optional[str]) -> Dict[str, Any]:
    sentence = "None of the variations changes the outcome"
    sentence += f" ({why_not})." if why_not else "."
    sentence += (" If it fails on the newest torch release too, report it upstream with the report block "
                 "(`--report FILE`).")
    return {"kind": "none", "variation": None, "unset": [], "issue": None, "sentence": sentence,
            "workaround": None, "evidence": evidence}
