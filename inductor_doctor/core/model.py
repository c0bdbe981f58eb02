"""The vocabulary every other module speaks: statuses, known issues, findings, reports, exit codes.

It imports nothing heavy, so that `--help`, `list` and `explain` stay fast and torch-free; every
other module may import it, and it imports none of them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.codes import ExitCode, FailOn, UsageError
from inductor_doctor.core.document import Document, Policy

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

__all__ = ["ExitCode", "FailOn", "UsageError"]  # re-exported: the vocabulary speaks them too


class Status(str, enum.Enum):
    """A verdict for one issue on one device. Ordered by how much it should worry the user."""

    AFFECTED = "affected"
    LIKELY = "likely"
    INCONCLUSIVE = "inconclusive"
    OK = "ok"
    NOT_APPLICABLE = "not-applicable"

    @property
    def rank(self) -> int:
        return _STATUS_RANK[self]


_STATUS_RANK = {
    Status.NOT_APPLICABLE: 0,
    Status.OK: 1,
    Status.INCONCLUSIVE: 2,
    Status.LIKELY: 3,
    Status.AFFECTED: 4,
}


class Basis(str, enum.Enum):
    """Where a verdict comes from: a canary that ran, a file/symbol inspection, or a version table."""

    CANARY = "canary"
    STATIC = "static"
    VERSION = "version"


class Proof(str, enum.Enum):
    """How far a canary got on the device a verdict is about: the whole path `ran` there (compiled,
    loaded, launched on that GPU), or it was only `compiled` for it (the cross-target canary: a GPU
    that is not here). A cross-target `ok` is "compiled for sm_80 with ptxas 12.8", never "runs on
    sm_80": loading and launching stay unproven, and the row says so."""

    RAN = "ran"
    COMPILED = "compiled"


class Severity(str, enum.Enum):
    """`error`: compilation fails or results are wrong. `warning`: a silent degradation."""

    ERROR = "error"
    WARNING = "warning"


class DeviceKind(str, enum.Enum):
    """Where an issue can occur. A check runs once per concrete device of each kind it names."""

    CPU = "cpu"
    CUDA = "cuda"
    XLA = "xla"
    TOOLCHAIN = "toolchain"


@dataclass(frozen=True)
class Workaround:
    """One documented way around an issue. Only `command` is machine-runnable; `text` is advice."""

    text: str
    command: Optional[str] = None
    kind: str = "other"  # env | pin | flag | code | upgrade | install | other
    applies: Mapping[str, str] = field(default_factory=dict)  # package -> PEP 440 specifier; {}: always

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "command": self.command, "kind": self.kind, "applies": dict(self.applies)}

    @staticmethod
    def pick(workarounds: Sequence[Workaround], *first: Workaround, drop: Sequence[str] = ()) -> Tuple[
            Workaround, ...]:
        """`first` (advice the evidence calls for, often built from it: the compiler that is there),
        then the issue's own `workarounds` in their order, leaving out those whose command or text
        contains any of `drop` (what the evidence shows cannot help) and repeats of `first`."""
        seen = {w.command or w.text for w in first}
        rest = tuple(w for w in workarounds if (w.command or w.text) not in seen
                     and not any(d in (w.command or "") or d in w.text for d in drop))
        return tuple(first) + rest

    def applies_to(self, versions: Mapping[str, Sequence[str]]) -> bool:
        """Whether it can help where `versions` (package -> the versions it is or may be) are
        installed or planned. A package whose version is unknown never hides a workaround."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        for name, spec in self.applies.items():
            candidates = versions.get(name) or ()
            try:
                wanted = SpecifierSet(spec)
                parsed = [Version(Version(v).public) for v in candidates]
            except (InvalidSpecifier, InvalidVersion):
                continue
            if parsed and not any(wanted.contains(v, prereleases=True) for v in parsed):
                return False
        return True


@dataclass(frozen=True)
class Signature:
    """An error pattern that identifies an issue in a canary's output or a user's log.

    `exact` signatures are the issue's own error text; `partial` ones are symptoms it shares with
    others and so only count together with an exact one or as weak evidence in triage.

    Some errors have the same wording as another bug's. `unless` names what gives the other bug
    away in the lines just before the error (a match with it there does not count at all). The
    rest concern a user's log only (a canary's output needs none: there, the canary itself is the
    context); the first two turn an exact match into a partial one that says why, the third
    removes it:

    * `anchor`: what the issue's own context leaves in a log (the path is a compile cache's, the
      kernel is a user's `@triton.jit` one), searched within `anchor_lines` lines of the error
      (None: anywhere in the log); `anchor_says` names that context for the user;
    * `log_context`: the same as words, any of which the log must contain somewhere;
    * `against`: what, anywhere in the log, gives away the look-alike the issue's page names as
      another cause (the log is from macOS, where no CUDA build exists): the signature's matches
      then do not count at all; `against_says` says it.

    A weak match in a user's log (a `partial` signature, or an exact one without its context)
    counts only where the log also shows the issue's `subject`: names of the evidence that ties a
    log to it (`compile-cache`, `triton-kernel`, `inductor`, `dynamo`, `torch`, `triton`, `xla`;
    `triage/context.py` says what each looks for), or regexes of its own; none declared means the
    compile stack at all (any of the first five).

    A log whose versions fall outside the issue's `affected` range makes an exact match partial,
    unless the signature is not `ranged`: its wording is the whole failure class, on any release
    (`affected` then describes only the instance the module's rule checks).
    """

    pattern: str
    strength: str = "exact"  # exact | partial
    note: str = ""
    flags: int = re.IGNORECASE
    unless: str = ""
    log_context: Tuple[str, ...] = ()
    anchor: str = ""
    anchor_says: str = ""
    anchor_lines: Optional[int] = None
    against: str = ""
    against_says: str = ""
    ranged: bool = True
    subject: Tuple[str, ...] = ()
    #: A fact the log may state that makes a weak match of this signature sure (`triage/facts.py`:
    #: "gpu-arch-missing", the log's torch has no kernel for the log's GPU by its release's arch list).
    fact: str = ""
    #: Where the log alone cannot decide (the error with nothing of its context or subject around it:
    #: a bare "GLIBCXX_3.4.32' not found"), the one fact of a machine that does, in a user's words
    #: ("this machine's libstdc++: the GLIBCXX versions it defines"). Such a match is "possibly" the
    #: issue instead of nothing, and `explain --log --check` decides it by the issue's check here.
    decided_by: str = ""

    def compiled(self) -> re.Pattern[str]:
        return _compile(self.pattern, self.flags)

    def search(self, text: str) -> Optional[re.Match[str]]:
        if not self.unless:
            return self.compiled().search(text)
        for m in self.compiled().finditer(text):
            if not self.excluded(text[lines_before(text, m.start()) : m.start()]):
                return m
        return None

    def excluded(self, before: str) -> bool:
        """Whether the text just before a match shows it to be another bug's error."""
        return bool(self.unless) and _compile(self.unless, self.flags).search(before) is not None


#: How far back `Signature.unless` looks: the error's own traceback lines, not the whole log.
UNLESS_LINES = 3
UNLESS_CHARS = 2048


def lines_before(text: Any, start: int, lines: int = UNLESS_LINES, cap: int = UNLESS_CHARS) -> int:
    """Where the `lines` lines before `start` begin (at most `cap` characters back); str or bytes."""
    newline = "\n" if isinstance(text, str) else b"\n"
    floor = max(0, start - cap)
    pos = start
    for _ in range(lines + 1):
        nl = text.rfind(newline, floor, pos)
        if nl < 0:
            return floor
        pos = nl
    return pos + 1


_PATTERNS: dict[tuple[str, int], re.Pattern[str]] = {}


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    key = (pattern, flags)
    if key not in _PATTERNS:
        _PATTERNS[key] = re.compile(pattern, flags)
    return _PATTERNS[key]


@dataclass(frozen=True)
class Canary:
    """A self-contained reproducer script shipped in `inductor_doctor/canaries/`.

    The script takes the device as its first argument and simply runs the upstream reproducer: it
    raises (or aborts) when the bug is present. The runner wraps it, so the same file is also the
    copyable reproducer that `explain` prints.
    """

    script: str
    devices: Tuple[DeviceKind, ...]
    needs: Tuple[str, ...] = ("torch",)
    timeout_s: float = 120.0
    env: Mapping[str, str] = field(default_factory=dict)
    deep: bool = False  # opt-in only: too slow for a default `check`
    #: Kept so that plugins setting it still load; a death by signal now counts only together with
    #: one of the issue's exact signatures (an abort is how many unrelated bugs end too).
    affected_exit_signals: Tuple[int, ...] = ()


@dataclass(frozen=True)
class CrossCanary:
    """How a GPU that is not here is judged for this issue (`check --gpu sm_80`, `plan --gpu`): by the
    cross-target canary (`target/cross_compile.py`), which compiles its kernels for that GPU with the
    Triton and assembler under test, down to the binary, and by the issue's rule on the described GPU.

    `kernels` are the canary's kernels whose compile decides the issue (none: the rule on the
    described GPU alone, a static row); `partial` when the compile reaches only part of the failure
    path (the failure is in loading, which only the GPU does), so that a clean compile never makes
    a prediction `ok`; `backends` the GPU families the issue concerns (`cuda`, `hip`); `needs` what
    must be described beside the GPU for the issue to be judged at all (`driver`: `--driver`).
    """

    kernels: Tuple[str, ...] = ()
    partial: bool = False
    backends: Tuple[str, ...] = ("cuda",)
    needs: Tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleOutcome:
    """What a static rule concluded. `device=None` means every device of the issue present here."""

    status: Status
    reason: str
    basis: Basis = Basis.VERSION
    device: Optional[str] = None
    details: Mapping[str, Any] = field(default_factory=dict)


StaticRule = Callable[["Facts"], Sequence[RuleOutcome]]
Advisor = Callable[["Facts"], Sequence["Workaround"]]
#: `plan`'s per-issue hook: the planned stack (a `plan.inputs.PlanInput`: versions, compiler, flags,
#: GPU, driver, Python) in, predictions out. Issues without one are judged on their `affected`
#: specifiers alone. Typed loosely so that the vocabulary imports nothing of the `plan` command.
PlanPredictor = Callable[[Any], Sequence[RuleOutcome]]
#: `check --artifact`'s and `plan --artifact`'s per-issue hook: an artifact's facts (what it was built
#: for) and the host or planned stack that would load it (an `artifact.host.HostView`) in, this
#: issue's outcome for it out, or None when there is nothing to compare. Typed loosely for the same
#: reason.
ArtifactJudge = Callable[[Any, Any], Optional[RuleOutcome]]


@dataclass(frozen=True)
class KnownIssue:
    """One known issue: metadata, detection (static rule, canary, signatures) and workarounds.

    Prose that is too long for a field lives on the issue's docs page (`docs/issues/<id>.md`).
    """

    id: str
    title: str
    severity: Severity
    devices: Tuple[DeviceKind, ...]
    upstream: Tuple[str, ...]
    summary: str
    aliases: Tuple[str, ...] = ()
    affected: Mapping[str, str] = field(default_factory=dict)  # package -> PEP 440 specifier
    fixed: Mapping[str, str] = field(default_factory=dict)  # package -> first fixed version
    signatures: Tuple[Signature, ...] = ()
    workarounds: Tuple[Workaround, ...] = ()
    rule: Optional[StaticRule] = None
    canary: Optional[Canary] = None
    docs_page: Optional[str] = None  # absolute path; None: docs/issues/<id>.md of this package
    source: str = "builtin"  # or the distribution name of the plugin that provided it
    predict: Optional[PlanPredictor] = None  # `plan` hook for conditions beyond package versions
    #: A finding about the whole environment (torch missing, a platform not covered) that, when not
    #: fine, is said before anything else, because every other row depends on it.
    headline: bool = False
    #: The workarounds that can help in the state the facts show, best first: a rule's evidence
    #: (what is installed, what CXX names, where the headers are) decides which advice comes first
    #: and drops what cannot help (installing what is there already). None: `workarounds` as written.
    #: Only reads facts, as a rule does; see `Workaround.pick` for how one is written.
    advise: Optional[Advisor] = None
    #: An artifact issue's judgement of one compiled artifact (`ArtifactJudge`): every issue with one
    #: is asked about each `--artifact`, in `load_order` (where a load meets it: 1 first), and the
    #: first that says `affected` decides the artifact's row.
    judge_artifact: Optional[ArtifactJudge] = None
    load_order: int = 0
    #: How a GPU that is not here is judged (`check --gpu`); None: target columns leave it out.
    cross: Optional[CrossCanary] = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity.value,
            "devices": [d.value for d in self.devices],
            "upstream": list(self.upstream),
            "aliases": list(self.aliases),
            "summary": self.summary,
            "affected": dict(self.affected),
            "fixed": dict(self.fixed),
            "signatures": [s.pattern for s in self.signatures],
            "workarounds": [w.to_dict() for w in self.workarounds],
            "canary": self.canary.script if self.canary else None,
            "source": self.source,
            "docs_page": self.docs_page,
        }


@dataclass(frozen=True)
class Finding:
    """One verdict: one issue on one device."""

    id: str
    title: str
    device: str
    status: Status
    basis: Basis
    reason: str
    severity: Severity = Severity.ERROR
    workarounds: Tuple[Workaround, ...] = ()
    upstream: Tuple[str, ...] = ()
    duration_s: float = 0.0
    evidence: Tuple[str, ...] = ()  # the first lines of what the canary printed, when it matters
    suppressed: Optional[str] = None  # the reason, when the user accepted this finding
    #: The known issue this row is an instance of, where its id is not one (`check --artifact`'s
    #: rows are `artifact.<file>`): what `explain` takes.
    issue: Optional[str] = None
    #: How far the canary behind a canary verdict got (`Proof`): "ran" on the device, or only
    #: "compiled" for it (a GPU that is not here: `check --gpu`); None for a verdict no canary made.
    proved: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"issue": self.issue} if self.issue else {}
        if self.proved:
            extra["proved"] = self.proved
        return {
            "id": self.id,
            "title": self.title,
            "device": self.device,
            "status": self.status.value,
            "basis": self.basis.value,
            "reason": self.reason,
            "severity": self.severity.value,
            "workarounds": [w.to_dict() for w in self.workarounds],
            "upstream": list(self.upstream),
            "duration_s": round(self.duration_s, 3),
            "evidence": list(self.evidence),
            "suppressed": self.suppressed,
            **extra,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        return cls(
            id=d["id"],
            title=d["title"],
            device=d["device"],
            status=Status(d["status"]),
            basis=Basis(d["basis"]),
            reason=d["reason"],
            severity=Severity(d.get("severity", "error")),
            workarounds=tuple(
                Workaround(w["text"], w.get("command"), w.get("kind", "other"), dict(w.get("applies") or {}))
                for w in d.get("workarounds", [])
            ),
            upstream=tuple(d.get("upstream", [])),
            duration_s=float(d.get("duration_s", 0.0)),
            evidence=tuple(d.get("evidence", [])),
            suppressed=d.get("suppressed"),
            issue=d.get("issue"),
            proved=d.get("proved"),
        )


def summarize(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {s.value: 0 for s in Status}
    for f in findings:
        counts[f.status.value] += 1
    return counts


def exit_code_for(
    findings: Sequence[Finding], fail_on: FailOn, fail_on_warnings: bool = False
) -> ExitCode:
    """The contract's exit-code policy for `check` and `merge`.

    Suppressed findings never fail a run; warning-severity findings fail it only on request.
    """
    if fail_on is FailOn.NEVER:
        return ExitCode.OK
    threshold = Status(fail_on.value).rank
    for f in findings:
        if f.suppressed is not None:
            continue
        if f.severity is Severity.WARNING and not fail_on_warnings:
            continue
        if f.status.rank >= threshold:
            return ExitCode.FINDINGS
    return ExitCode.OK


class Progress:
    """What a long-running command says while it works. Commands call it and never print; the CLI's
    display (render/progress.py) shows it. Every method does nothing here."""

    def phase(self, name: str) -> None:
        """A new step began ("probing the toolchain", "running canaries")."""

    def planned(self, count: int) -> None:
        """How many canaries will run."""

    def started(self, key: str) -> None:
        """A canary (`issue@device`) started."""

    def finished(self, key: str, status: str) -> None:
        """A canary ended with this verdict."""


@dataclass
class Report(Document):
    """What `check` (and `plan`, `probe`) found, ready to render: the environment, one finding per
    issue and device, the summary, and `meta`. `command` names the JSON schema it follows."""

    command: str
    environment: Mapping[str, Any]
    findings: Sequence[Finding]
    tool_version: str
    kb_version: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {
            "environment": dict(self.environment),
            "results": [f.to_dict() for f in self.findings],
            "summary": summarize(self.findings),
            "meta": dict(self.meta),
        }

    def outcome(self, policy: Policy) -> ExitCode:
        """A finding at or above `--fail-on` fails the run (`exit_code_for`)."""
        if policy is None:
            return ExitCode.OK
        fail_on, warnings = policy
        return exit_code_for(self.findings, fail_on, warnings)
