"""`inductor-doctor why -- CMD ...`: which controlled variation flips a failing command.

PyTorch's troubleshooting guide localises a torch.compile failure by hand: clear the caches, try
another compiler, drop your settings, step the backend down from Inductor to `aot_eager` to `eager`.
`why` does it: it runs the command once as it is (the baseline, which must fail; its output is
triaged), then re-runs it under the variations of `why/variations.py` (`why/runs.py`: each in its
own process group with its own fresh caches and a timeout, several at once, stopping as soon as the
answer is known unless `--all` asks for every one), and says which flips it (`why/conclude.py`).
When the answer is Inductor, the compiler bisector and the minifier take it on from there
(`why/handoff.py`). `--compare` makes a wrong result a failure (`why/compare.py`): every run is
compared with the command's eager output. Nothing the user owns is changed: every re-run's caches,
the bisector's state and the step-down's `sitecustomize` live in the doctor's temporary directory,
removed at the end; only a minified reproducer is kept, in a directory of its own that the answer
names.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional

from inductor_doctor.core.codes import ExitCode, UsageError
from inductor_doctor.core.document import Document, Policy
from inductor_doctor.kb import KB_VERSION
from inductor_doctor.why import compare, runs
from inductor_doctor.why.attempt import Attempt, Launch, run_attempt
from inductor_doctor.why.conclude import Conclusion, Kind, baseline_passed, conclude
from inductor_doctor.why.runs import STOPPED, Session, Tried


@dataclass
class WhyRequest:
    argv: List[str]
    run_all: bool = False
    jobs: Optional[int] = None
    timeout_s: Optional[float] = None  # per run; default from the baseline's duration
    report: Optional[str] = None
    versions: bool = False  # also other torch releases, in scratch venvs (why/versions.py)
    compare: bool = False  # a wrong result is the failure (why/compare.py)
    bisect: bool = True  # an answer in Inductor goes on to the compiler bisector (why/handoff.py)
    rtol: float = 1e-3
    atol: float = 1e-3


@dataclass
class WhyDocument(Document):
    argv: List[str]
    baseline: Attempt
    triage: Dict[str, Any]
    tried: List[Tried]
    conclusion: Conclusion
    jobs: int
    timeout_s: float
    duration_s: float
    scrub: List[str] = field(default_factory=list)
    report: Optional[str] = None
    report_document: Any = None  # what --report FILE gets (the CLI renders it)
    compared: Any = None  # why/compare.py's Compared, with --compare
    command: str = "why"
    kb_version: str = KB_VERSION

    @property
    def decided(self) -> bool:
        return self.conclusion.decided

    def outcome(self, policy: Policy) -> ExitCode:
        """0: a variation names the cause; 1: none does; 2: the command did not fail at all."""
        if self.conclusion.kind is Kind.BASELINE_PASSED:
            return ExitCode.USAGE
        return ExitCode.OK if self.decided else ExitCode.FINDINGS

    def body(self) -> Dict[str, Any]:
        ran = sum(t.attempt is not None and t.status != STOPPED for t in self.tried)
        return {
            "command_line": shlex.join(self.argv),
            "baseline": self.baseline.to_dict(self.scrub),
            "triage": self.triage,
            "variations": [t.to_dict(self.scrub) for t in self.tried],
            "conclusion": self.conclusion.to_dict(),
            "report": self.report,
            "compare": self.compared.to_dict() if self.compared is not None else None,
            "meta": {"jobs": self.jobs, "timeout_s": self.timeout_s, "duration_s": round(self.duration_s, 2),
                     "runs": 1 + ran, "variations": len(self.tried)},
        }


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
    from inductor_doctor.why import handoff
    from inductor_doctor.why.versions import command_python

    user_env = dict(os.environ)
    jobs = request.jobs or runs.default_jobs()
    raw = list(request.argv)
    python = command_python(raw, user_env.get("PATH"))
    argv, compared = raw, None
    if request.compare:
        compared = _reference(request, user_env, root, jobs, python, say)
        argv = compare.wrap(python or "", raw, compared)
    say(f"baseline: {shlex.join(raw)}")
    launch = Launch(argv, user_env, runs.workdir(root, "baseline"), request.timeout_s or 3600.0)
    baseline = run_attempt(launch)
    if baseline.error:
        raise UsageError(f"{request.argv[0]}: {baseline.error}")
    timeout = request.timeout_s or max(120.0, 4 * baseline.duration_s)
    session = Session(argv, user_env, root, jobs, timeout, baseline, [root, *runs.user_caches(user_env)], say,
                      request.run_all)
    result = triage_output(baseline.output, "baseline output") if not baseline.passed else None
    found = summary(result)
    if baseline.passed:
        what = f"its output agrees with eager's ({compared.how})" if compared else "exit 0"
        return WhyDocument(raw, baseline, found, [], baseline_passed(baseline, what), jobs, timeout,
                           time.monotonic() - start, session.scrub, compared=compared)
    tried = runs.run_plan(session, runs.plan(user_env, matched_ids(result, 1)))
    conclusion = conclude(baseline, tried, session.scrub, found)
    if (conclusion.kind is Kind.ENVIRONMENT and (conclusion.variation or "").startswith("unset:")
            and len(conclusion.unset) > 1):
        tried += runs.narrow(session, list(conclusion.unset))
        conclusion = conclude(baseline, tried, session.scrub, found)
    if handoff.wanted(conclusion) and not request.bisect:
        conclusion = replace(conclusion, notes=(
            *conclusion.notes, "The compiler bisector and the minifier were not run (--no-bisect)."))
    elif handoff.wanted(conclusion):
        conclusion, proving = handoff.hand_off(session, conclusion, raw, python, compared)
        tried += proving
    if request.versions:
        releases, conclusion = _versions(session, conclusion, raw, compared)
        tried += releases
    conclusion = _leftover(conclusion, user_env)
    document = WhyDocument(raw, baseline, found, tried, conclusion, jobs, timeout, time.monotonic() - start,
                           session.scrub, request.report, compared=compared)
    if request.report:
        from inductor_doctor.report.block import report_of

        document.report_document = report_of(baseline.output)
    return document


def _reference(request: WhyRequest, env: Dict[str, str], root: str, jobs: int, python: Optional[str],
               say: Any) -> compare.Compared:
    """--compare: the command's eager output, which every later run is compared with."""
    if python is None:
        raise UsageError("--compare needs a Python interpreter with torch for the command (none on its PATH)")
    nothing = Attempt(0, 0.0, b"", 0)  # no baseline yet: the eager runs are judged by their exit alone
    session = Session(list(request.argv), env, root, jobs, request.timeout_s or 3600.0, nothing, [root], say)
    return compare.reference(session, request.rtol, request.atol)


def _leftover(conclusion: Conclusion, env: Dict[str, str]) -> Conclusion:
    """A compiler-bisector state left in the user's Inductor cache is said, whatever the answer."""
    from inductor_doctor.kb import registry
    from inductor_doctor.why.bisect import leftover_state

    where = leftover_state(env)
    if where is None:
        return conclusion
    known = any(i.id == "bisect-state-leftover" for i in registry())
    name = " (bisect-state-leftover: `inductor-doctor explain bisect-state-leftover`)" if known else ""
    return replace(conclusion, notes=(*conclusion.notes, (
        f"A compiler-bisector state is left in your Inductor cache, {where}{name}: every compile of this "
        f"user runs under the bisector (pytorch#143453); remove it with `rm -rf {where}`.")))


def _versions(session: Session, conclusion: Conclusion, raw: List[str], compared: Any) -> Any:
    """Other torch releases, when the answer is still in the compiler, or with --all (with --compare,
    each release's run is compared with this torch's eager output)."""
    from inductor_doctor.why.conclude import releases_not_tried, wants_releases, with_releases

    if not wants_releases(conclusion, session.run_all):
        return [], releases_not_tried(conclusion, "the cause is found without another torch release")
    interpreter, installed = runs.installed_torch(replace(session, argv=raw))  # the command's own
    if interpreter is None or installed is None:
        return [], releases_not_tried(conclusion, (
            "the command does not start with a Python interpreter that has torch (`python repro.py` can be "
            "re-run with another torch)"))
    def argv_for(python: str) -> List[str]:
        return compare.wrap(python, [python, *raw[1:]], compared) if compared else [python, *raw[1:]]

    tried = runs.run_releases(session, interpreter, installed, argv_for)
    return tried, with_releases(conclusion, tried, installed)
