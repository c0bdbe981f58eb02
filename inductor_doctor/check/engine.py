"""Turns facts, static rules and canary runs into findings: one per issue and device.

The policy lives here and nowhere else: a rule's prediction stands where no canary can run; a
canary that ran decides; a canary that failed in a way that is not the issue's signature is
`inconclusive`, never `ok`.
"""

from __future__ import annotations

import re
import signal as _signal
import time
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

from inductor_doctor.check.runner import CanaryJob, CanaryRun, ProcessGroups, run_all
from inductor_doctor.model import (
    Basis,
    DeviceKind,
    Finding,
    KnownIssue,
    Progress,
    RuleOutcome,
    Status,
)
from inductor_doctor.probe.facts import Facts
from inductor_doctor.target import canary_path

EVIDENCE_LINES = 6


@dataclass
class CheckOptions:
    python: str
    static: bool = False
    deep: bool = False
    timeout_s: Optional[float] = None  # overrides each canary's own timeout
    jobs: int = 1
    only: Sequence[str] = ()
    skip: Sequence[str] = ()


def devices_for(issue: KnownIssue, facts: Facts) -> List[str]:
    """The concrete devices present here on which this issue can occur."""
    out: List[str] = []
    for kind in issue.devices:
        if kind is DeviceKind.CPU:
            out.append("cpu")
        elif kind is DeviceKind.CUDA:
            out.extend(g.device for g in facts.gpus)
        elif kind is DeviceKind.XLA:
            if facts.xla is not None and facts.xla.version:
                out.append("xla")
        elif kind is DeviceKind.TOOLCHAIN:
            out.append("toolchain")
    return out


def _run_rule(issue: KnownIssue, facts: Facts) -> List[RuleOutcome]:
    if issue.rule is None:
        return []
    try:
        return list(issue.rule(facts))
    except Exception as exc:  # a plugin's bug must not take the whole check down
        return [
            RuleOutcome(
                Status.INCONCLUSIVE,
                f"the static rule failed: {type(exc).__name__}: {exc}",
                Basis.STATIC,
            )
        ]


def _outcome_for(outcomes: Sequence[RuleOutcome], device: str) -> Optional[RuleOutcome]:
    exact = [o for o in outcomes if o.device == device]
    if exact:
        return exact[0]
    general = [o for o in outcomes if o.device is None]
    return general[0] if general else None


def _finding(
    issue: KnownIssue,
    device: str,
    status: Status,
    basis: Basis,
    reason: str,
    duration_s: float = 0.0,
    evidence: Tuple[str, ...] = (),
) -> Finding:
    workarounds = issue.workarounds if status in (Status.AFFECTED, Status.LIKELY) else ()
    return Finding(
        id=issue.id,
        title=issue.title,
        device=device,
        status=status,
        basis=basis,
        reason=reason.strip().splitlines()[0] if reason.strip() else status.value,
        severity=issue.severity,
        workarounds=workarounds,
        upstream=issue.upstream,
        duration_s=duration_s,
        evidence=evidence,
    )


def _first_lines(text: str, n: int = EVIDENCE_LINES) -> Tuple[str, ...]:
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return tuple(line[:300] for line in lines[:n])


def _last_lines(text: str, n: int = EVIDENCE_LINES) -> Tuple[str, ...]:
    """The end of a traceback: where the exception is, not whichever frames a cut falls on."""
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return tuple(line[:300] for line in lines[-n:])


# Hints Dynamo appends to every compile failure; never the cause.
_BOILERPLATE = re.compile(
    r"^(Set TORCHDYNAMO_VERBOSE=|You can suppress this exception|For even more developer)"
)
_COMPILER_ERROR = re.compile(r"(?<![\w])(fatal )?error:")


def _telling_line(message: str) -> str:
    """The line of an error message that names the cause: a compiler's `error:` line if there is
    one (Inductor's CppCompileError puts it mid-message), else the last line that is not a hint."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _BOILERPLATE.match(ln)]
    for line in lines:
        if _COMPILER_ERROR.search(line):
            return line
    return lines[-1] if lines else ""


def _match_signature(issue: KnownIssue, text: str) -> Optional[Tuple[str, str]]:
    """The first exact signature found in `text`: (the matched line, the signature's note)."""
    for sig in issue.signatures:
        if sig.strength != "exact":
            continue
        m = sig.search(text)
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            line = text[start : end if end >= 0 else len(text)].strip()
            return line[:300], sig.note
    return None


def signal_name(num: int) -> str:
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def classify(issue: KnownIssue, run: CanaryRun) -> Tuple[Status, str, Tuple[str, ...]]:
    """A canary run → (status, one-line reason, evidence lines)."""
    if run.error:
        return Status.INCONCLUSIVE, f"canary could not run: {run.error}", ()
    result = run.result or {}
    if run.timed_out:
        return (
            Status.INCONCLUSIVE,
            f"canary timed out after {run.job.timeout_s:g}s (raise --timeout if this machine is slow)",
            _first_lines(run.stderr[-4000:]),
        )
    if run.interrupted:
        return Status.INCONCLUSIVE, "interrupted before the canary finished", ()
    text = "\n".join(
        [str(result.get("message", "")), str(result.get("traceback", "")), run.stdout, run.stderr]
    )
    status = result.get("status")
    if status == "ok":
        versions = result.get("versions") or {}
        pretty = ", ".join(f"{k} {v}" for k, v in versions.items())
        return Status.OK, f"canary ran clean{' (' + pretty + ')' if pretty else ''}", ()
    if status == "missing":
        return Status.NOT_APPLICABLE, str(result.get("message", "a needed module is missing")), ()
    if status == "skip":
        return Status.NOT_APPLICABLE, str(result.get("message", "not applicable here")), ()
    hit = _match_signature(issue, text)
    sig = run.signal
    if hit:
        line, note = hit
        reason = f"canary reproduced it: {line}"
        if sig:
            reason += f" ({signal_name(sig)})"
        return Status.AFFECTED, reason, _first_lines(line)
    if sig and sig in run.job.affected_signals:
        return (
            Status.AFFECTED,
            f"canary died with {signal_name(sig)}, this issue's signature",
            _first_lines(run.stderr[-4000:]),
        )
    if status == "error":
        exc = str(result.get("exc_type", "error")).replace("builtins.", "")
        first = _telling_line(str(result.get("message", "")))
        return (
            Status.INCONCLUSIVE,
            f"canary failed, but not with this issue's signature: {exc}: {first}"[:400],
            _last_lines(str(result.get("traceback", ""))[-3000:] or run.stderr[-3000:]),
        )
    if sig:
        return (
            Status.INCONCLUSIVE,
            f"canary crashed with {signal_name(sig)}, which is not this issue's signature",
            _first_lines(run.stderr[-4000:]),
        )
    return (
        Status.INCONCLUSIVE,
        f"canary exited (code {run.returncode}) without reporting a result",
        _first_lines(run.stderr[-4000:] or run.stdout[-4000:]),
    )


@dataclass
class _Pending:
    issue: KnownIssue
    device: str
    static: Optional[RuleOutcome]
    job: CanaryJob


@dataclass
class CheckResult:
    findings: List[Finding] = field(default_factory=list)
    canaries_run: int = 0
    duration_s: float = 0.0
    interrupted: Optional[BaseException] = None  # set when SIGINT/SIGTERM cut the run short
    transient: bool = False  # a canary timed out: worth re-running, not worth caching
    jobs: int = 1  # how many canaries ran at once


def _combine(p: _Pending, run: CanaryRun) -> Finding:
    status, reason, evidence = classify(p.issue, run)
    static = p.static
    if status is Status.NOT_APPLICABLE and static is not None:
        return _finding(
            p.issue,
            p.device,
            static.status,
            static.basis,
            f"{static.reason}; canary: {reason}",
            run.duration_s,
        )
    if (
        status is Status.INCONCLUSIVE
        and static is not None
        and static.status
        in (
            Status.AFFECTED,
            Status.LIKELY,
        )
    ):
        return _finding(
            p.issue,
            p.device,
            Status.LIKELY,
            static.basis,
            f"{static.reason}; canary inconclusive: {reason}",
            run.duration_s,
            evidence,
        )
    return _finding(p.issue, p.device, status, Basis.CANARY, reason, run.duration_s, evidence)


def select(issues: Sequence[KnownIssue], only: Sequence[str], skip: Sequence[str]) -> List[KnownIssue]:
    chosen = [i for i in issues if not only or i.id in only]
    return [i for i in chosen if i.id not in skip]


def run_checks(
    facts: Facts,
    issues: Sequence[KnownIssue],
    options: CheckOptions,
    progress: Optional[Progress] = None,
    groups: Optional[ProcessGroups] = None,
) -> CheckResult:
    start = time.monotonic()
    progress = progress or Progress()
    findings: Dict[Tuple[str, str], Finding] = {}
    order: List[Tuple[str, str]] = []
    pending: List[_Pending] = []

    for issue in issues:
        outcomes = _run_rule(issue, facts)
        devices = devices_for(issue, facts)
        if not devices:
            # Nothing to run a canary on here: the rule's prediction is all we have.
            if outcomes:
                for o in outcomes:
                    device = o.device or issue.devices[0].value
                    status = o.status
                    if status is Status.AFFECTED and o.basis is Basis.VERSION:
                        status = Status.LIKELY  # a version table alone is a prediction
                    order.append((issue.id, device))
                    findings[(issue.id, device)] = _finding(issue, device, status, o.basis, o.reason)
            else:
                kinds = "/".join(k.value for k in issue.devices)
                device = issue.devices[0].value
                order.append((issue.id, device))
                findings[(issue.id, device)] = _finding(
                    issue, device, Status.NOT_APPLICABLE, Basis.STATIC, f"no {kinds} device here"
                )
            continue
        extra = [o for o in outcomes if o.device and o.device not in devices]
        for device in devices + [o.device for o in extra if o.device]:
            key = (issue.id, device)
            if key in findings:
                continue
            order.append(key)
            static = _outcome_for(outcomes, device)
            canary = issue.canary
            can_run = (
                canary is not None
                and not options.static
                and (options.deep or not canary.deep)
                and device in devices
                and (DeviceKind.TOOLCHAIN not in canary.devices or device == "toolchain")
                and (static is None or static.status is not Status.NOT_APPLICABLE)
            )
            if can_run and canary is not None:
                job = CanaryJob(
                    key=f"{issue.id}@{device}",
                    script=canary_path(canary.script),
                    device=device,
                    python=options.python,
                    timeout_s=options.timeout_s or canary.timeout_s,
                    needs=canary.needs,
                    env=dict(canary.env),
                    affected_signals=tuple(canary.affected_exit_signals),
                )
                pending.append(_Pending(issue, device, static, job))
                continue
            if static is not None:
                findings[key] = _finding(issue, device, static.status, static.basis, static.reason)
            elif canary is not None and canary.deep and not options.deep:
                findings[key] = _finding(
                    issue,
                    device,
                    Status.INCONCLUSIVE,
                    Basis.STATIC,
                    "this canary is slow and runs only with --deep",
                )
            else:
                why = "--static skips canaries" if options.static else "no static rule applies"
                findings[key] = _finding(
                    issue, device, Status.INCONCLUSIVE, Basis.STATIC, f"not checked: {why}"
                )

    progress.planned(len(pending))
    interrupted: Optional[BaseException] = None
    finished: List[CanaryRun] = []
    if pending:
        by_key = {p.job.key: p for p in pending}

        def done(run: CanaryRun) -> None:
            finished.append(run)
            p = by_key[run.job.key]
            progress.finished(run.job.key, _combine(p, run).status.value)

        try:
            jobs = [p.job for p in pending]
            run_all(jobs, options.jobs, done, lambda job: progress.started(job.key), groups)
        except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM turned into one: keep what finished
            interrupted = exc
        for run in list(finished):
            p = by_key[run.job.key]
            findings[(p.issue.id, p.device)] = _combine(p, run)
        for p in pending:  # interrupted before it finished
            findings.setdefault(
                (p.issue.id, p.device),
                _finding(
                    p.issue, p.device, Status.INCONCLUSIVE, Basis.CANARY, "interrupted before the canary ran"
                ),
            )
    installed = {name: [info.version] for name, info in (("torch", facts.torch), ("triton", facts.triton),
                                                          ("torch-xla", facts.xla)) if info and info.version}
    return CheckResult(
        findings=[_applicable(findings[k], installed) for k in order],
        canaries_run=len(pending),
        duration_s=time.monotonic() - start,
        interrupted=interrupted,
        transient=any(run.timed_out for run in finished) if pending else False,
        jobs=options.jobs,
    )


def _applicable(finding: Finding, installed: Dict[str, List[str]]) -> Finding:
    """Drop the workarounds that cannot help with the installed releases (`Workaround.applies`)."""
    kept = tuple(w for w in finding.workarounds if w.applies_to(installed))
    return finding if len(kept) == len(finding.workarounds) else replace(finding, workarounds=kept)


def with_suppression(finding: Finding, reason: Optional[str]) -> Finding:
    return replace(finding, suppressed=reason) if reason else finding
