"""What a plan is, for the known issues that predict from it: the planned stack and its judgements.

`kb/` modules read a `PlanInput` in their `predict` hooks, and the default prediction
(`predict_from_versions`) judges an issue's `affected` specifiers against it. This is vocabulary:
it imports nothing of the `plan` command, so the knowledge base can use it without a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.facts import CompilerInfo
from inductor_doctor.core.model import Basis, KnownIssue, PlanPredictor, RuleOutcome, Status

#: A plan's three answers, kept apart (`Finding.answer`): predicted (`affected`, `likely`, `ok`),
#: cannot arise in the planned stack (`not-applicable`), cannot be predicted from the plan
#: (`inconclusive`, with what decides it: `Finding.decided_by`).
PREDICTED, CANNOT_ARISE, CANNOT_BE_PREDICTED = "predicted", "cannot-arise", "cannot-be-predicted"
ANSWERS = {
    Status.AFFECTED: PREDICTED,
    Status.LIKELY: PREDICTED,
    Status.OK: PREDICTED,
    Status.NOT_APPLICABLE: CANNOT_ARISE,
    Status.INCONCLUSIVE: CANNOT_BE_PREDICTED,
}
#: The `RuleOutcome.details` key of what decides an outcome the plan cannot predict.
DECIDED_BY = "decided_by"
#: The `RuleOutcome.details` key of an outcome a probe on this machine decided (`plan/here.py`): the
#: row is then `static`, not a prediction from versions.
PROBED = "probed_here"


def probed_here(outcomes: List[RuleOutcome]) -> List[RuleOutcome]:
    """Outcomes a probe of this machine decided (the `--cxx` compiler, asked): said so in the row."""
    return [RuleOutcome(o.status, o.reason, Basis.STATIC, o.device, {**o.details, PROBED: True})
            for o in outcomes]


def once_installed(issue_id: str, env: str = "") -> str:
    """The command that decides an issue the plan cannot: its check, where the stack is installed."""
    return f"{env + ' ' if env else ''}inductor-doctor check --only {issue_id}, where the stack is installed"


def with_option(option: str, issue_id: str) -> str:
    """What decides an issue the plan lacks an input for: that input, or its check once installed."""
    return f"add {option} to the plan; or {once_installed(issue_id)}"


def unpredictable(why: str, decided_by: str, device: Optional[str] = None) -> List[RuleOutcome]:
    """`inconclusive`: what the plan lacks to predict the issue (`why`), and what decides it instead."""
    return [RuleOutcome(Status.INCONCLUSIVE, f"cannot be predicted from the plan: {why}", Basis.VERSION,
                        device, {DECIDED_BY: decided_by})]


@dataclass(frozen=True)
class PlannedPackage:
    """One planned component and the versions it may end up as.

    `candidates` are the versions judged: the pinned one, or every known release the range
    allows, or (`resolved == "bounds"`) versions probed at the range's bounds when no known
    release fits. `version_known` is False when only installing would tell (a VCS URL).
    """

    name: str
    specifier: str  # the combined specifier, "" for any version
    candidates: Tuple[str, ...]
    resolved: str  # pin | releases | bounds | unknown
    sources: Tuple[str, ...] = ()  # "requirements.txt:3", ...
    inferred_from: Optional[str] = None  # e.g. "torch==2.5.1 requires triton==3.1.0"
    written: str = ""  # the requirement as the user wrote it, when there is exactly one
    display: str = ""  # the name as the user spelled it (torch_xla), for messages

    @property
    def shown_name(self) -> str:
        return self.display or self.name

    @property
    def version_known(self) -> bool:
        return self.resolved != "unknown" and bool(self.candidates)

    def describe(self) -> str:
        """`torch==2.5.1`, `torch>=2.4,<2.6` (as written), or `torch (any version)`."""
        if self.resolved == "pin":
            return f"{self.shown_name}=={self.candidates[0]}"
        if self.written:
            return self.written
        name = self.shown_name
        return f"{name}{self.specifier}" if self.specifier else f"{name} (any version)"


@dataclass(frozen=True)
class Compiler:
    """A C++ compiler as named on the command line; the version only if the name carries it."""

    command: str
    kind: Optional[str] = None  # gcc | clang | msvc | intel | None (c++, cc, unknown names)
    version: Optional[str] = None  # "19", "13.2"

    @property
    def major(self) -> Optional[int]:
        return int(self.version.split(".")[0]) if self.version else None


@dataclass(frozen=True)
class Judgement:
    """How the versions a plan allows fall against one issue specifier."""

    share: str  # all | some | none | absent | unknown
    hits: Tuple[str, ...] = ()
    misses: Tuple[str, ...] = ()

    @property
    def status(self) -> Status:
        return {
            "all": Status.AFFECTED,
            "some": Status.LIKELY,
            "none": Status.OK,
            "absent": Status.NOT_APPLICABLE,
        }.get(self.share, Status.INCONCLUSIVE)


@dataclass(frozen=True)
class PlanInput:
    """Everything a `predict` hook may read: the planned packages and toolchain.

    `None` means "not in the plan" (not "fine"): a hook that needs a value that is absent
    answers `not-applicable` when the component is absent, `likely` when it could go either way.
    """

    packages: Mapping[str, PlannedPackage]
    python_version: str  # "3.12" or "3.12.4"
    cxx: Optional[Compiler] = None
    cxxflags: Tuple[str, ...] = ()
    cuda: Optional[str] = None  # "12.4"
    driver: Optional[str] = None  # "535.104.05"
    gpu_sm: Optional[int] = None  # 90 for sm_90
    platform: str = "linux"  # sys_platform of the target, from the marker environment
    free_threaded: bool = False  # --python-version 3.13t
    #: The torch build the plan installs: `cpu`, `cuda`, `rocm`, `xpu`, or None when the plan does not
    #: say (a GPU build may be installed). `build_source` says what decided it, for reasons.
    build: Optional[str] = None
    build_source: str = ""
    index_urls: Tuple[str, ...] = ()  # --index-url and the requirement files' -i/--extra-index-url
    #: The build's index tag when the plan names one (`cpu`, `cu128`: a `+cu128` label or PyTorch's
    #: index); None for the wheel PyPI serves the platform.
    variant: Optional[str] = None
    marker_env: Mapping[str, str] = field(default_factory=dict)  # the target's PEP 508 environment
    #: The `--cxx` compiler as probed on this machine, when it is here (`plan/here.py`): what it
    #: compiles (OpenMP, a shared object), as `check` would ask it. None when not named or not here.
    cxx_here: Optional[CompilerInfo] = None

    def package(self, name: str) -> Optional[PlannedPackage]:
        return self.packages.get(canonicalize_name(name))

    def judge(self, name: str, spec: str) -> Judgement:
        """Do all, some or none of the versions planned for `name` satisfy `spec`?"""
        pkg = self.package(name)
        if pkg is None:
            return Judgement("absent")
        if not pkg.version_known:
            return Judgement("unknown")
        try:
            issue_spec = SpecifierSet(spec)
        except InvalidSpecifier:
            return Judgement("unknown")
        hits, misses = [], []
        for v in pkg.candidates:
            (hits if _contains(issue_spec, v) else misses).append(v)
        share = "all" if not misses else "some" if hits else "none"
        return Judgement(share, tuple(hits), tuple(misses))

    def flag_values(self, prefix: str) -> List[str]:
        """The values of `PREFIX=value` flags in `--cxxflags`, in order (the last one wins)."""
        return [f[len(prefix) :] for f in self.cxxflags if f.startswith(prefix)]

    @property
    def machine(self) -> str:
        return self.marker_env.get("platform_machine", "")

    def torch_variant(self, version: str) -> Optional[dict]:
        """The snapshot's facts of the planned torch build at `version` (see `variant_facts`)."""
        from inductor_doctor.core.releases import variant_facts

        return variant_facts(version, self.variant, self.platform, self.machine)

    @property
    def cpu_only(self) -> bool:
        """True when the planned torch is a CPU-only build: no GPU issue can arise."""
        return self.build == "cpu"

    @property
    def python(self) -> Tuple[int, int]:
        major, minor = self.python_version.split(".")[:2]
        return int(major), int(minor)



def build_aware(hook: PlanPredictor) -> PlanPredictor:
    """Mark a `predict` hook that judges CPU-only builds itself (torch-cpu-only-build), so that
    `plan` does not rule its GPU issue out for a CPU-only plan before asking it."""
    hook.build_aware = True  # type: ignore[attr-defined]
    return hook


def _contains(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def summarize_versions(versions: Sequence[str], limit: int = 4) -> str:
    """`2.4.0, 2.4.1` or `2.0.0 … 2.5.1 (12 releases)`."""
    if len(versions) <= limit:
        return ", ".join(versions)
    return f"{versions[0]} … {versions[-1]} ({len(versions)} releases)"


def explain_judgement(inp: PlanInput, name: str, spec: str, j: Judgement, fixed: Optional[str] = None) -> str:
    """One clause of a reason: what the plan allows against what the issue needs."""
    pkg = inp.package(name)
    if pkg is None:
        return f"{name} is not in the plan"
    name = pkg.shown_name
    shown = pkg.describe()
    origin = f" ({pkg.inferred_from})" if pkg.inferred_from else ""
    if j.share == "unknown":
        if pkg.inferred_from:
            return f"the {name} version is unknown: {pkg.inferred_from}; pin {name} to decide"
        return f"the version of {shown} is known only once installed; pin it to decide"
    fix = f"; fixed in {name} {fixed}" if fixed else ""
    bounds = " (judged at the range's bounds: no known release fits it)" if pkg.resolved == "bounds" else ""
    if j.share == "all":
        if pkg.resolved == "pin":
            return f"{shown}{origin} is in the affected range {name}{spec}{fix}"
        allowed = summarize_versions(j.hits)
        return f"every release {shown} allows ({allowed}) is in the affected range {spec}{fix}{bounds}"
    if j.share == "none":
        if pkg.resolved == "pin":
            return f"{shown}{origin} is outside the affected range {name}{spec}"
        return f"no release {shown} allows is in the affected range {name}{spec}{bounds}"
    hint = f" — pin {name}>={fixed} to rule it out" if fixed else ""
    return (
        f"{shown}{origin} allows {summarize_versions(j.hits)}, in the affected range {spec} "
        f"(and {summarize_versions(j.misses)}, outside it){bounds}{hint}"
    )


def combine_judgements(parts: Sequence[Judgement]) -> Status:
    """Every condition must hold for the issue to bite: absent beats unknown beats none."""
    shares = [p.share for p in parts]
    if "absent" in shares:
        return Status.NOT_APPLICABLE
    if "unknown" in shares:
        return Status.INCONCLUSIVE
    if "none" in shares:
        return Status.OK
    if all(s == "all" for s in shares):
        return Status.AFFECTED
    return Status.LIKELY


def predict_from_versions(inp: PlanInput, issue: KnownIssue) -> List[RuleOutcome]:
    """The default prediction: the issue's `affected` specifiers, all of which must hold."""
    if not issue.affected:
        return unpredictable("it depends on the machine the stack is installed on, not on versions",
                             once_installed(issue.id))
    judgements = []
    clauses = []
    for pkg, spec in issue.affected.items():
        j = inp.judge(pkg, spec)
        judgements.append(j)
        clauses.append((canonicalize_name(pkg), spec, j))
    status = combine_judgements(judgements)
    # Say what decided it: the absent/unknown/clearing clause first, else every clause.
    decisive = {
        Status.NOT_APPLICABLE: "absent",
        Status.INCONCLUSIVE: "unknown",
        Status.OK: "none",
    }.get(status)
    shown = [c for c in clauses if decisive is None or c[2].share == decisive]
    reason = "; ".join(explain_judgement(inp, n, s, j, _fixed(issue, n)) for n, s, j in shown)
    return [RuleOutcome(status, reason, Basis.VERSION)]


def _fixed(issue: KnownIssue, name: str) -> Optional[str]:
    for pkg, version in issue.fixed.items():
        if canonicalize_name(pkg) == name:
            return version
    return None
