"""The flow of `check`: the request, the selection, the two stages, and the `check` document.

A request (`CheckRequest`) selects the issues; the probe's static facts start the engine's
canaries (`check/engine.py`) while the live probe and the ABI compile run beside them, a second
stage whose facts the verdicts are decided on; the findings are tailored, remembered as the last
check, suppressed where the user said so, and returned as a `Report`. This is the only place that
ties the pieces together; each piece stays testable on its own. `confirm` is the one way another
command runs "check --only" on the issues it found.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.check.artifacts import read
from inductor_doctor.check.canary_env import applied, machine_env
from inductor_doctor.check.devices import DeviceFilter
from inductor_doctor.check.engine import CheckResult, Progress
from inductor_doctor.check.environment import environment_of
from inductor_doctor.core.model import (
    Basis,
    ExitCode,
    Finding,
    KnownIssue,
    Report,
    Status,
    UsageError,
)
from inductor_doctor.core.version import __version__
from inductor_doctor.probe.target import resolve_python


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so that the same clean-up path kills every canary."""


@dataclass
class CheckRequest:
    python: Optional[str] = None
    static: bool = False
    deep: bool = False
    timeout_s: Optional[float] = None
    jobs: Optional[int] = None
    only: Sequence[str] = ()
    skip: Sequence[str] = ()
    use_cache: bool = True
    suppress: Sequence[str] = ()
    config: Optional[Path] = None
    live: bool = True  # check always includes the live facts, except with --static
    extra_meta: Dict[str, Any] = field(default_factory=dict)
    #: This check's share of the devices (one torchrun rank's, say); None checks every device here.
    devices: Optional[DeviceFilter] = None
    #: Whether this check becomes "the last check" of its interpreter (what `fix` reads); a check
    #: run to try a workaround is not.
    remember: bool = True
    #: Compiled artifacts to check against this host (`--artifact`): one row each.
    artifacts: Sequence[str] = ()
    #: Environment changes this check runs under, its probe and its canaries (None unsets): a
    #: workaround `fix` tries. This process's environment is never changed.
    env: Mapping[str, Optional[str]] = field(default_factory=dict)
    #: GPUs that are not here (`--gpu sm_80`, `--gpu gfx942`): a column each, earned by compiling for them.
    gpus: Sequence[str] = ()
    #: The NVIDIA driver those GPUs will have (`--driver`), for the rows that depend on it.
    driver: Optional[str] = None


def select_issues(only: Sequence[str], skip: Sequence[str]) -> List[KnownIssue]:
    """The issues to check; an unknown id in --only/--skip is a usage error naming the closest ones."""
    from inductor_doctor.kb import registry

    reg = registry()
    chosen: Dict[str, KnownIssue] = {}
    for name in only:
        issue = reg.find(name)
        if issue is None:
            raise UsageError(_unknown(name, reg.closest(name)))
        chosen[issue.id] = issue
    skipped = set()
    for name in skip:
        issue = reg.find(name)
        if issue is None:
            raise UsageError(_unknown(name, reg.closest(name)))
        skipped.add(issue.id)
    base = list(chosen.values()) if only else list(reg)
    return [i for i in base if i.id not in skipped]


def _unknown(name: str, closest: Sequence[str]) -> str:
    hint = f"; did you mean {', '.join(closest)}?" if closest else "; see `inductor-doctor list`"
    return f"unknown issue {name!r}{hint}"


def _install_sigterm() -> Any:
    def handler(signum: int, frame: Any) -> None:
        raise Terminated()

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return None


def run_check(request: CheckRequest, progress: Optional[Progress] = None) -> Report:
    """Probe, check every selected issue on every device, and return the `check` document.

    The probe and the rules run every time; only canary outcomes are reused (check/cache.py), keyed
    by everything they depend on. `progress` hears what is happening; this function never prints.
    """
    from inductor_doctor.check.suppressions import apply_suppressions, load_suppressions
    from inductor_doctor.kb import registry

    start = time.monotonic()
    issues = select_issues(request.only, request.skip)
    _artifact_issues_need_an_artifact(request, issues)
    targets, _ = targets_of(request)  # a bad --gpu or --driver is the user's error, before any probe
    python = resolve_python(request.python)
    suppressions = load_suppressions(request.config, request.suppress)
    if request.devices is not None:
        issues = request.devices.issues(issues)
    meta: Dict[str, Any] = {**request.extra_meta}
    plugin_errors = registry().plugin_errors
    if plugin_errors:
        meta["plugin_errors"] = [{"entry_point": n, "error": e} for n, e in plugin_errors]

    # A missing or unreadable artifact is the user's error, before any probe.
    artifacts = read(request.artifacts) if request.artifacts else []
    facts, result, findings = _examine(request, python, issues, artifacts, progress or Progress())
    from inductor_doctor.plan.tailor import tailor

    findings = tailor(findings, facts)  # install workarounds written for this machine
    environment = environment_of(facts)
    meta.update(duration_s=round(time.monotonic() - start, 3), probe_duration_s=round(facts.duration_s, 3),
                static=request.static, cached=False)
    if targets:  # GPUs that are not here: compiled for, whatever --static says of this machine's
        meta["targets"] = [t.name for t in targets]
    if result is not None:
        meta.update(jobs=result.jobs, canaries_run=result.canaries_run,
                    canaries_cached=result.canaries_cached, cached=result.canaries_cached > 0)
        if result.cache_note:
            meta["cache_note"] = result.cache_note
    from inductor_doctor.core.paths import cache_refusal

    refusal = cache_refusal()
    if refusal:
        meta["cache_note"] = refusal
    notices = (result.notices if result is not None else []) + _notices(findings, issues)
    if notices:
        meta["notices"] = notices
    if result is not None and result.interrupted is not None:
        meta["interrupted"] = True
        meta["exit_code"] = int(
            ExitCode.TERMINATED if isinstance(result.interrupted, Terminated) else ExitCode.INTERRUPTED
        )
    elif not facts.python.error and request.devices is None and request.remember:
        from inductor_doctor.check.cache import save_last

        why = save_last(python, _report(environment, findings, meta).to_dict())
        if why:
            meta.setdefault("cache_note", why)
    findings, notes = apply_suppressions(findings, suppressions)
    if notes:
        meta["suppression_notes"] = notes
    return _report(environment, findings, meta)


def _artifact_issues_need_an_artifact(request: CheckRequest, issues: Sequence[KnownIssue]) -> None:
    """`--only` naming artifact issues alone, with no `--artifact`, would check nothing: say what to add."""
    from inductor_doctor.kb._artifacts import NO_ARTIFACT

    artifact_issues = all(i.judge_artifact is not None for i in issues)
    if request.only and not request.artifacts and issues and artifact_issues:
        raise UsageError(f"{', '.join(i.id for i in issues)} {NO_ARTIFACT}")


def targets_of(request: CheckRequest) -> Tuple[Tuple[Any, ...], Optional[str]]:
    """(the --gpu targets, the --driver) as the check uses them; a usage error for a bad one."""
    from inductor_doctor.core.gpu_target import parse_targets
    from inductor_doctor.plan.resolve import parse_driver

    if request.driver and not request.gpus:
        raise UsageError("--driver describes the GPUs named by --gpu: add --gpu sm_XX")
    return tuple(parse_targets(request.gpus)), parse_driver(request.driver)


def _notices(findings: Sequence[Finding], issues: Sequence[KnownIssue]) -> List[str]:
    """What must be said before any matrix: the findings of `headline` issues that are not fine."""
    headline = {i.id for i in issues if i.headline}
    bad = (Status.AFFECTED, Status.LIKELY, Status.INCONCLUSIVE)
    return [f.reason for f in findings if f.id in headline and f.status in bad]


def _examine(
    request: CheckRequest, python: str, issues: Sequence[KnownIssue], artifacts: Sequence[Any],
    progress: Progress,
) -> Tuple[Any, Optional[CheckResult], List[Finding]]:
    """The probe, then the engine: (facts, the engine's result or None, findings).

    The live probe (an `import torch`) starts first and runs beside the canaries, which start as
    soon as the static facts are known: its facts join before anything is decided.
    """
    from inductor_doctor.check.cache import CanaryStore
    from inductor_doctor.check.engine import CheckOptions, run_checks
    from inductor_doctor.check.runner import default_jobs
    from inductor_doctor.probe import LiveProbe, gather

    previous = _install_sigterm()
    environ = applied(request.env) if request.env else None
    live = LiveProbe(python, environ=environ) if request.live and not request.static else None
    share = request.devices
    try:
        progress.phase("probing the toolchain")
        # The probe's remembered answers are machine facts keyed by all they depend on (a compiler
        # binary and its search directories, torch's files): `--no-cache` re-runs canaries only.
        facts = gather(python, live_probe=live, environ=environ)
        if share is not None:
            facts = share.facts(facts)
        if facts.python.error:
            why = f"could not run the target interpreter: {facts.python.error}"
            findings = [Finding(i.id, i.title, "toolchain", Status.INCONCLUSIVE, Basis.STATIC, why,
                                i.severity, upstream=i.upstream) for i in issues]
            return facts, None, findings

        def finish(facts: Any) -> Any:
            """The late facts of this rank's share of the devices (`live.finish` for a whole check)."""
            whole = live.finish(facts) if live is not None else facts
            return share.facts(whole) if share is not None else whole

        # The late facts, a second stage: a new snapshot with the live answer and the ABI compile.
        late = finish if share is not None else (live.finish if live is not None else None)

        progress.phase("checking")
        targets, driver = targets_of(request)
        jobs = request.jobs or default_jobs(len(facts.gpus) + len(targets))
        store = CanaryStore(not request.static or bool(targets), facts, reuse=request.use_cache)
        options = CheckOptions(python=python, static=request.static, deep=request.deep,
                               timeout_s=request.timeout_s, jobs=jobs, store=store,
                               canary_env=machine_env(facts), base_env=environ,
                               crowded=None, artifacts=artifacts, targets=targets, driver=driver)
        result = run_checks(facts, issues, options, progress, finish_facts=late)
        findings = result.findings if share is None else share.findings(result.findings)
        return result.facts or facts, result, findings
    finally:
        if live is not None:
            live.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _report(environment: Dict[str, Any], findings: Sequence[Finding], meta: Dict[str, Any]) -> Report:
    from inductor_doctor.kb import KB_VERSION

    return Report("check", environment, list(findings), __version__, KB_VERSION, meta)


# --- confirming what another command found -----------------------------------------------------------


@dataclass
class Confirmed:
    """The checks of the issues another command found, run here now (`check --only`): the report,
    or the one line that said why they could not run (an issue id the knowledge base lacks)."""

    report: Optional[Report] = None
    error: Optional[str] = None

    @property
    def ran(self) -> bool:
        return self.report is not None

    def results(self) -> List[Dict[str, Any]]:
        return [f.to_dict() for f in self.report.findings] if self.report is not None else []


def confirm(ids: Sequence[str], python: Optional[str] = None, timeout_s: Optional[float] = None,
            remember: bool = True) -> Confirmed:
    """`check --only IDS` in this process: its canaries are subprocesses like any check's, so an
    interrupt stops them all and nothing is orphaned. `remember=False` keeps it from becoming the
    last check that `fix` and `explain` read."""
    try:
        return Confirmed(run_check(CheckRequest(python=python, only=list(ids), timeout_s=timeout_s,
                                                remember=remember)))
    except UsageError as exc:
        return Confirmed(error=str(exc))
