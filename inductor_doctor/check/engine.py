"""Turns facts, static rules and canary runs into findings: one per issue and device, and one per
`--artifact`.

Three steps, each its own function: plan (every issue's rule on the facts, and the canary jobs
that can run here: one `Cell` per issue and device, one `ArtifactCell` per artifact, one `TargetCell`
per GPU that is not here, `--gpu`), run (the jobs not answered by the canary cache, in parallel,
slowest first: one pool, one replay, one cache for every cell), and decide (check/verdict.py: the one
table of what a rule and a canary together are worth).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from inductor_doctor.artifact.host import host_view
from inductor_doctor.check.artifacts import (
    Judged,
    judge,
    load_job,
    load_outcome,
    row_finding,
    row_ids,
    stored_key,
)
from inductor_doctor.check.cache import CanaryStore
from inductor_doctor.check.classify import canary_outcome, classify, signal_name  # noqa: F401 - API
from inductor_doctor.check.runner import HARNESS, CanaryJob, CanaryRun, ProcessGroups, run_all
from inductor_doctor.check.verdict import CanaryOutcome, Decision, decide
from inductor_doctor.core.facts import Facts
from inductor_doctor.core.gpu_target import GpuTarget
from inductor_doctor.core.model import (
    Basis,
    DeviceKind,
    Finding,
    KnownIssue,
    Progress,
    RuleOutcome,
    Status,
    Workaround,
)
from inductor_doctor.target import canary_path


@dataclass
class CheckOptions:
    python: str
    static: bool = False
    deep: bool = False
    timeout_s: Optional[float] = None  # overrides each canary's own timeout
    jobs: int = 1
    store: Optional[CanaryStore] = None  # the canary cache; None keeps and reuses nothing
    canary_env: Dict[str, str] = field(default_factory=dict)  # given to every canary (machine facts)
    #: The environment every canary starts from (a request's, with a workaround applied); None: this
    #: process's.
    base_env: Optional[Mapping[str, str]] = None
    #: GPUs ("cuda:0") nearly full: their canaries run one at a time. None: the engine finds them in
    #: the facts (`nearly_full_gpus`), and says so in `CheckResult.notices`.
    crowded: Optional[Tuple[str, ...]] = ()
    #: Compiled artifacts (`artifact.read_artifact`'s facts) to check against this host: one row each.
    artifacts: Sequence[Any] = ()
    #: GPUs that are not here, a column each (`--gpu sm_80`): earned by the cross-target canary, which
    #: runs even with `static` (it needs no device), and judged by each issue's rule on the described GPU.
    targets: Tuple[GpuTarget, ...] = ()
    driver: Optional[str] = None  # the NVIDIA driver those GPUs will have (`--driver`), if known


@dataclass
class CheckResult:
    findings: List[Finding] = field(default_factory=list)
    canaries_run: int = 0  # run now
    canaries_cached: int = 0  # answered from the canary cache
    duration_s: float = 0.0
    interrupted: Optional[BaseException] = None  # set when SIGINT/SIGTERM cut the run short
    jobs: int = 1  # how many canaries ran at once
    cache_note: Optional[str] = None  # why canary outcomes could not be kept, if so
    facts: Optional[Facts] = None  # the snapshot the verdicts were decided on
    notices: List[str] = field(default_factory=list)  # what must be said first (a GPU nearly full)


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
        if issue.source == "builtin":
            raise  # the doctor's own: exit 3 (cli.main), never a finding about this machine
        return [RuleOutcome(Status.INCONCLUSIVE, f"the static rule failed: {type(exc).__name__}: {exc}",
                            Basis.STATIC)]


def _outcome_for(outcomes: Sequence[RuleOutcome], device: str) -> Optional[RuleOutcome]:
    exact = [o for o in outcomes if o.device == device]
    if exact:
        return exact[0]
    general = [o for o in outcomes if o.device is None]
    return general[0] if general else None


def advice(issue: KnownIssue, facts: Facts) -> Tuple[Workaround, ...]:
    """The issue's workarounds as its evidence orders them (`KnownIssue.advise`), else as written;
    a plugin's advisor that fails leaves the written order."""
    if issue.advise is None:
        return issue.workarounds
    try:
        return tuple(issue.advise(facts))
    except Exception:  # noqa: BLE001 - a plugin's advice is never worth a failed check
        if issue.source == "builtin":
            raise  # the doctor's own: exit 3
        return issue.workarounds


def _finding(issue: KnownIssue, device: str, verdict: Decision, duration_s: float = 0.0,
             workarounds: Optional[Tuple[Workaround, ...]] = None) -> Finding:
    reason = verdict.reason.strip()
    return Finding(
        id=issue.id,
        title=issue.title,
        device=device,
        status=verdict.status,
        basis=verdict.basis,
        reason=reason.splitlines()[0] if reason else verdict.status.value,
        severity=issue.severity,
        workarounds=(issue.workarounds if workarounds is None else workarounds)
        if verdict.status in (Status.AFFECTED, Status.LIKELY) else (),
        upstream=issue.upstream,
        duration_s=duration_s,
        evidence=verdict.evidence,
        proved=verdict.proved.value if verdict.proved else None,
    )


# --- 1. plan: rules now, canaries where they can run ------------------------------------------------


@dataclass
class Cell:
    """One issue on one device: the rule's outcome and, where it can run, the canary job."""

    issue: KnownIssue
    device: str
    present: bool  # the device is here (a canary could run on it)
    rule: Optional[RuleOutcome]
    job: Optional[CanaryJob] = None
    not_run: str = "no static rule applies"  # why no canary runs, where none does

    @property
    def key(self) -> Tuple[str, str]:
        return self.issue.id, self.device

    def store_key(self, store: CanaryStore) -> Optional[str]:
        """Its canary's key in the canary cache: everything the outcome depends on."""
        assert self.job is not None
        return store.key(self.job, HARNESS)

    def decision(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Decision:
        outcome: Optional[CanaryOutcome] = None
        if canary_run is not None and self.job is not None:
            outcome = canary_outcome(self.issue, canary_run)
        elif self.job is not None and interrupted:
            outcome = CanaryOutcome(Status.INCONCLUSIVE, "interrupted before the canary ran")
        kinds = "/".join(k.value for k in self.issue.devices)
        return decide(self.rule, self.present, outcome, self.not_run, kinds)


@dataclass
class ArtifactCell:
    """One `--artifact` on the device it targets: the artifact issues' judgement (the row's rule) and,
    where that device is here, the canary that loads it (check/artifacts.py says what decides it)."""

    rid: str  # the row's id: `artifact.<file name>`
    judged: Judged
    host: Any  # the host the artifact is judged against (`artifact.host.HostView`)
    present: bool
    job: Optional[CanaryJob] = None
    not_run: str = ""

    @property
    def key(self) -> Tuple[str, str]:
        return self.rid, self.judged.device

    def store_key(self, store: CanaryStore) -> Optional[str]:
        """The job's key joined with the artifact's own (its size, time and contents read)."""
        assert self.job is not None
        return stored_key(store, self.job, self.judged.artifact)

    def decision(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Decision:
        outcome: Optional[CanaryOutcome] = None
        if canary_run is not None and self.job is not None:
            outcome = load_outcome(canary_run)
        elif self.job is not None and interrupted:
            outcome = CanaryOutcome(Status.INCONCLUSIVE, "interrupted before the canary ran")
        return decide(self.judged.decided, self.present, outcome, self.not_run,
                      self.judged.artifact.device or "cpu")

    def finding(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Finding:
        verdict = self.decision(canary_run, interrupted)
        return row_finding(self.rid, self.judged, self.host, verdict, canary_run)


def artifact_cells(facts: Facts, options: CheckOptions) -> List[ArtifactCell]:
    """One cell per artifact, judged against this host's facts; a canary where its device is here."""
    host = host_view(facts)
    present = {"cpu", *host.gpus}
    cells = []
    for rid, art in zip(row_ids(options.artifacts), options.artifacts):
        j = judge(art, host)
        here = j.device in present
        job = None if options.static or not here else load_job(rid, j, options.python, options.timeout_s,
                                                                  options.canary_env)
        not_run = "--static skips canaries" if options.static else f"no {j.device} device here"
        cells.append(ArtifactCell(rid, j, host, here, job, not_run))
    return cells


@dataclass
class TargetCell:
    """One GPU that is not here (`--gpu sm_80`): every issue that says how such a GPU is judged (its
    data file's `[cross]`), each with its rule on the described GPU, and the one cross-target canary
    that compiles their kernels for it (check/cross.py). One job, many rows: a row per issue, and one
    for each issue whose signature a compile failure carries (the ROCm linker missing)."""

    target: GpuTarget
    #: (issue, its rule on the described GPU, why no compile decides it; "" for a row the compile does
    #: not judge at all: one that needs --driver, without it)
    rules: List[Tuple[KnownIssue, Optional[RuleOutcome], str]]
    job: Optional[CanaryJob] = None

    @property
    def key(self) -> Tuple[str, str]:
        return "cross", self.target.name

    def store_key(self, store: CanaryStore) -> Optional[str]:
        assert self.job is not None
        return store.key(self.job, HARNESS)

    def decisions(self, canary_run: Optional[CanaryRun], interrupted: bool = False,
                  issues: Sequence[KnownIssue] = ()) -> List[Tuple[KnownIssue, Decision]]:
        from inductor_doctor.check import cross

        read = cross.read(self.target, canary_run, cross.kernels_of(self.job)) if (
            canary_run is not None and self.job is not None) else None
        out: List[Tuple[KnownIssue, Decision]] = []
        for issue, rule, not_run in self.rules:
            outcome = cross.outcome(issue, read, issues) if read is not None and not_run else None
            compiles = self.job is not None and issue.cross is not None and bool(issue.cross.kernels)
            if outcome is None and compiles and interrupted and not_run:
                outcome = CanaryOutcome(Status.INCONCLUSIVE, "interrupted before the canary ran")
            out.append((issue, decide(rule, outcome is not None, outcome, not_run, self.target.name)))
        if read is not None:
            have = {i.id for i, _, _ in self.rules}
            for issue in cross.matched_elsewhere(read, issues):
                if issue.id not in have:
                    found = cross.outcome(issue, read, issues)
                    out.append((issue, decide(None, True, found, "", self.target.name)))
        return out

    def decision(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Decision:
        """The worst of its rows (what progress shows for the target's canary)."""
        found = [d for _, d in self.decisions(canary_run, interrupted)]
        return max(found, key=lambda d: d.status.rank) if found else decide(None, False, None)


def target_cells(facts: Facts, issues: Sequence[KnownIssue], options: CheckOptions) -> List[TargetCell]:
    """A cell per `--gpu`: the issues that judge it, their rules on the described GPU, its canary."""
    from inductor_doctor.check import cross
    from inductor_doctor.kb.triton_shared_memory import target_limit

    cells = []
    for target in options.targets:
        chosen = [i for i in issues if i.cross is not None and target.backend in i.cross.backends]
        kernels = cross.kernels_for(chosen, target)
        job = cross.job(target, options.python, kernels, target_limit(target)[0], options.timeout_s,
                        options.canary_env) if kernels else None
        rules: List[Tuple[KnownIssue, Optional[RuleOutcome], str]] = []
        for issue in chosen:
            if "driver" in issue.cross.needs and not options.driver:  # type: ignore[union-attr]
                unnamed = RuleOutcome(Status.NOT_APPLICABLE, "the driver that will load its kernels is not "
                                      "named: add --driver to judge it", Basis.STATIC)
                rules.append((issue, unnamed, ""))
                continue
            rules.append((issue, cross.rule_for(issue, facts, target, options.driver),
                          "its rule alone judges a GPU that is not here"))
        cells.append(TargetCell(target, rules, job))
    return cells


def plan(facts: Facts, issues: Sequence[KnownIssue], options: CheckOptions) -> List[Cell]:
    cells: List[Cell] = []
    for issue in issues:
        if issue.judge_artifact is not None:  # its rows are `--artifact`'s, one per artifact (`ArtifactCell`)
            continue
        outcomes = _run_rule(issue, facts)
        devices = devices_for(issue, facts)
        if not devices:  # nothing to run a canary on: the rule's prediction is all there is
            for o in outcomes or [None]:  # type: ignore[list-item]
                device = (o.device if o else None) or issue.devices[0].value
                cells.append(Cell(issue, device, False, o))
            continue
        seen = set()
        extra = [o.device for o in outcomes if o.device and o.device not in devices]
        for device in devices + extra:
            if device in seen:
                continue
            seen.add(device)
            cell = Cell(issue, device, device in devices, _outcome_for(outcomes, device))
            _attach_canary(cell, options)
            cells.append(cell)
    return cells


def _attach_canary(cell: Cell, options: CheckOptions) -> None:
    canary = cell.issue.canary
    if canary is None:
        return
    if options.static:
        cell.not_run = "--static skips canaries"
    elif canary.deep and not options.deep:
        cell.not_run = "this canary is slow and runs only with --deep"
    elif (not cell.present or (DeviceKind.TOOLCHAIN in canary.devices and cell.device != "toolchain")
          or (cell.rule is not None and cell.rule.status is Status.NOT_APPLICABLE)):
        cell.not_run = "the canary does not apply here"
    else:
        cell.job = CanaryJob(
            key=f"{cell.issue.id}@{cell.device}",
            script=canary_path(canary.script),
            device=cell.device,
            python=options.python,
            timeout_s=options.timeout_s or canary.timeout_s,
            needs=canary.needs,
            env={**options.canary_env, **canary.env},
            affected_signals=tuple(canary.affected_exit_signals),
            one_at_a_time=_crowded_device(cell.device, options.crowded or ()),
        )


def _crowded_device(device: str, crowded: Sequence[str]) -> Optional[str]:
    """The nearly full GPU a canary on `device` would use: its own, or for a toolchain canary (which
    compiles on the first visible GPU when there is one) cuda:0."""
    if device in crowded:
        return device
    if device == "toolchain" and "cuda:0" in crowded:
        return "cuda:0"
    return None


#: Less free GPU memory than this and the GPU is nearly full: a canary's CUDA context alone takes
#: about 0.5 GiB, its kernels' buffers more, and up to five canaries use one GPU at once.
NEARLY_FULL_MIB = 4096


def nearly_full_gpus(facts: Facts) -> List[Tuple[str, str]]:
    """[(device, the sentence the headline says)] for each GPU whose free memory (nvidia-smi's
    memory.free, read by the probe) is below NEARLY_FULL_MIB."""
    out = []
    for gpu in facts.gpus:
        free = gpu.memory_free_mib
        if free is None or free >= NEARLY_FULL_MIB:
            continue
        total = f" of {gpu.memory_mib / 1024:.1f} GiB" if gpu.memory_mib else ""
        used = f", {gpu.memory_used_mib / 1024:.1f} GiB in use" if gpu.memory_used_mib is not None else ""
        out.append((gpu.device, f"{gpu.device} ({gpu.name}) is nearly full: {free / 1024:.1f} GiB free{total}"
                    f"{used} by other processes; its canaries run one at a time, and a compile there may "
                    "run out of memory"))
    return out


# --- 2. run: the canaries the cache cannot answer, slowest first -----------------------------------


def _replayed(job: CanaryJob, stored: Dict[str, object]) -> CanaryRun:
    return CanaryRun(job=job, returncode=stored.get("returncode"),  # type: ignore[arg-type]
                     timed_out=False, interrupted=False,
                     duration_s=float(stored.get("duration_s") or 0.0),  # type: ignore[arg-type]
                     stdout=str(stored.get("stdout") or ""), stderr=str(stored.get("stderr") or ""),
                     result=stored.get("result"), cached=True)  # type: ignore[arg-type]


Runs = Dict[Tuple[str, str], CanaryRun]
AnyCell = Union[Cell, ArtifactCell, TargetCell]


def run(cells: Sequence[AnyCell], options: CheckOptions, progress: Progress,
        groups: Optional[ProcessGroups] = None) -> Tuple[Runs, Optional[BaseException]]:
    """Every cell's canary run, from the cache or run now; and the interrupt that cut it short."""
    store = options.store
    by_key = {c.job.key: c for c in cells if c.job is not None}
    runs: Runs = {}
    todo: List[CanaryJob] = []
    keys: Dict[str, Optional[str]] = {}
    for key, cell in by_key.items():
        assert cell.job is not None
        keys[key] = cell.store_key(store) if store is not None else None
        stored = store.load(keys[key]) if store is not None else None
        if stored is not None:
            runs[cell.key] = _replayed(cell.job, stored)
        else:
            todo.append(cell.job)
    todo.sort(key=lambda j: -j.timeout_s)  # the slowest first: they bound the wall time
    progress.planned(len(todo))

    def done(r: CanaryRun) -> None:
        cell = by_key[r.job.key]
        runs[cell.key] = r
        if store is not None:
            store.save(keys[r.job.key], r)
        progress.finished(r.job.key, cell.decision(r).status.value)

    interrupted: Optional[BaseException] = None
    if todo:
        try:
            run_all(todo, options.jobs, done, lambda job: progress.started(job.key), groups, options.base_env)
        except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM turned into one: keep what finished
            interrupted = exc
    return runs, interrupted


# --- 3. decide --------------------------------------------------------------------------------------


def run_checks(
    facts: Facts,
    issues: Sequence[KnownIssue],
    options: CheckOptions,
    progress: Optional[Progress] = None,
    groups: Optional[ProcessGroups] = None,
    finish_facts: Optional[Callable[[Facts], Facts]] = None,
) -> CheckResult:
    """Every issue on every device, in two explicit stages. The canaries start on the static
    snapshot; `finish_facts` (the live probe and the ABI compile, which run beside them) returns the
    whole facts as a new snapshot, and the verdicts are decided on that one: the rules run on it,
    and a canary it allows that the static one did not runs then. The artifacts' rows come last,
    judged on the whole facts, their load canaries in the same pool and cache."""
    start = time.monotonic()
    progress = progress or Progress()
    find_crowded = options.crowded is None
    if find_crowded:
        options = replace(options, crowded=tuple(d for d, _ in nearly_full_gpus(facts)))
    cells = plan(facts, issues, options)
    targets = target_cells(facts, issues, options)  # side by side with the other canaries
    runs, interrupted = run([*cells, *targets], options, progress, groups)
    if finish_facts is not None and interrupted is None:
        facts = finish_facts(facts)
        cells = plan(facts, issues, options)
        targets = target_cells(facts, issues, options)  # the rules on the whole facts; the same jobs
        late = [c for c in cells if c.job is not None and c.key not in runs]
        if late:  # a canary the whole facts allow that the first ones did not
            more, interrupted = run(late, options, progress, groups)
            runs.update(more)
    rows: List[ArtifactCell] = []
    if options.artifacts and interrupted is None:
        progress.phase("loading artifacts")
        rows = artifact_cells(facts, options)
        more, interrupted = run(rows, options, progress, groups)
        runs.update(more)
    installed = {name: [info.version] for name, info in (("torch", facts.torch), ("triton", facts.triton),
                                                          ("torch-xla", facts.xla)) if info and info.version}
    findings = []
    advised: Dict[str, Tuple[Workaround, ...]] = {}
    for cell in cells:
        r = runs.get(cell.key)
        verdict = cell.decision(r, interrupted is not None)
        if cell.issue.id not in advised:
            advised[cell.issue.id] = advice(cell.issue, facts)
        found = _finding(cell.issue, cell.device, verdict, r.duration_s if r else 0.0, advised[cell.issue.id])
        findings.append(_applicable(found, installed))
    for tcell in targets:
        r = runs.get(tcell.key)
        for issue, verdict in tcell.decisions(r, interrupted is not None, issues):
            if issue.id not in advised:
                advised[issue.id] = advice(issue, facts)
            found = _finding(issue, tcell.target.name, verdict, r.duration_s if r else 0.0, advised[issue.id])
            findings.append(_applicable(found, installed))
    findings = _explained_by_others(findings, issues, runs)
    findings += [row.finding(runs.get(row.key), interrupted is not None) for row in rows]
    ran = [r for r in runs.values() if not r.cached]
    return CheckResult(
        findings=findings,
        canaries_run=len(ran),
        canaries_cached=len(runs) - len(ran),
        duration_s=time.monotonic() - start,
        interrupted=interrupted,
        jobs=options.jobs,
        cache_note=options.store.note if options.store is not None else None,
        facts=facts,
        notices=[said for _, said in nearly_full_gpus(facts)] if find_crowded else [],
    )


def _explained_by_others(findings: List[Finding], issues: Sequence[KnownIssue], runs: Runs) -> List[Finding]:
    """A canary that failed otherwise often failed of another issue found in the same check (no
    omp.h: every CPU compile fails). Say which, so the user fixes that one first."""
    flagged = {f.id for f in findings if f.status in (Status.AFFECTED, Status.LIKELY)}
    by_id = {i.id: i for i in issues}
    out = []
    for f in findings:
        run = runs.get((f.id, f.device))
        if f.status is Status.INCONCLUSIVE and f.basis is Basis.CANARY and run is not None:
            text = "\n".join([str((run.result or {}).get("message", "")), run.stderr[-8000:]])
            culprit = next((other for other in sorted(flagged - {f.id}) if any(
                sig.strength == "exact" and sig.search(text) for sig in by_id[other].signatures)), None)
            if culprit:
                f = replace(f, reason=f"{f.reason} — the error of {culprit}, found above: fix that first")
        out.append(f)
    return out


def _applicable(finding: Finding, installed: Dict[str, List[str]]) -> Finding:
    """Drop the workarounds that cannot help with the installed releases (`Workaround.applies`)."""
    kept = tuple(w for w in finding.workarounds if w.applies_to(installed))
    return finding if len(kept) == len(finding.workarounds) else replace(finding, workarounds=kept)


def with_suppression(finding: Finding, reason: Optional[str]) -> Finding:
    return replace(finding, suppressed=reason) if reason else finding
