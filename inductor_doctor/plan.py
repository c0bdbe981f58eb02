"""`plan`: which known issues a planned stack would hit, decided before anything is installed.

A `docker build` should fail at its first line, not after a 3 GB torch download, when the pins in
`requirements.txt` are known to break `torch.compile`. So `plan` reads specs and requirements
files, resolves each range over the real releases in `kb/_releases.py`, and asks each known issue:
do *all* versions the range allows hit you (`affected`), *some* (`likely`), or *none* (`ok`)? A
component the plan does not contain is `not-applicable`. By default an issue is judged on its
`affected` specifiers; an issue that also depends on the compiler, flags, GPU, driver or Python
sets a `predict` hook that reads a `PlanInput`.

This module imports nothing heavy and runs nothing: no torch, no compiler, no network.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from inductor_doctor.kb._releases import RELEASES, RELEASES_AS_OF, TORCH_TRITON_PIN
from inductor_doctor.model import (
    Basis,
    DeviceKind,
    Finding,
    KnownIssue,
    Report,
    RuleOutcome,
    Severity,
    Status,
    UsageError,
)
from inductor_doctor.plan_requirements import (
    PlannedRequirement,
    check_python_version,
    combine,
    intersect,
    marker_environment,
    read_all,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.kb import Registry


@dataclass
class PlanRequest:
    """What the `plan` command line asked for, unvalidated."""

    specs: List[str] = field(default_factory=list)
    requirement_files: List[Path] = field(default_factory=list)
    cxx: Optional[str] = None
    cxxflags: Optional[str] = None
    cuda: Optional[str] = None
    driver: Optional[str] = None
    gpu: Optional[str] = None
    python_version: Optional[str] = None


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
    def python(self) -> Tuple[int, int]:
        major, minor = self.python_version.split(".")[:2]
        return int(major), int(minor)


# --- parsing the toolchain options -------------------------------------------------------------

_COMPILER = re.compile(
    r"(?:^|[-_/])(?P<kind>clang\+\+|clang-cl|clang|g\+\+|gcc|c\+\+|cc|icpx|icx|cl)"
    r"(?:-?(?P<version>\d+(?:\.\d+){0,2}))?$",
    re.IGNORECASE,
)
_KINDS = {"clang++": "clang", "clang": "clang", "clang-cl": "clang", "g++": "gcc", "gcc": "gcc",
          "icpx": "intel", "icx": "intel", "cl": "msvc"}  # fmt: skip


def parse_compiler(text: Optional[str]) -> Optional[Compiler]:
    """`clang++-19`, `/usr/bin/g++-13`, `x86_64-linux-gnu-gcc-12`, `clang++`: never executed."""
    if text is None or not text.strip():
        return None
    command = text.strip()
    name = re.split(r"[\\/]", command)[-1]
    name = re.sub(r"\.exe$", "", name, flags=re.IGNORECASE)
    m = _COMPILER.search(name)
    if not m:
        return Compiler(command)
    return Compiler(command, _KINDS.get(m.group("kind").lower()), m.group("version"))


def parse_cxxflags(text: Optional[str]) -> Tuple[str, ...]:
    if not text:
        return ()
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--cxxflags {text!r}: cannot split ({exc}) — check the quoting") from None


def parse_cuda(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    m = re.match(r"^\s*(?:cu(?:da)?[-_ ]?)?(\d{2})\.?(\d)(?:\.\d+)?\s*$", text, re.IGNORECASE)
    if not m:
        raise UsageError(f"--cuda {text!r}: expected a CUDA version such as 12.4 (or cu124)")
    return f"{int(m.group(1))}.{m.group(2)}"


def parse_driver(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    if not re.match(r"^\d{3}(?:\.\d+){0,2}$", text.strip()):
        raise UsageError(f"--driver {text!r}: expected an NVIDIA driver version such as 535.104.05")
    return text.strip()


def parse_gpu(text: Optional[str]) -> Optional[int]:
    """`sm_90`, `sm_90a`, `compute_86`, `90`, `8.6` → 90 / 86."""
    if text is None:
        return None
    t = text.strip().lower()
    m = re.match(r"^(?:sm|compute)?_?(\d{2,3})[af]?$", t)
    if m:
        return int(m.group(1))
    m = re.match(r"^(\d{1,2})\.(\d)$", t)
    if m:
        return int(m.group(1)) * 10 + int(m.group(2))
    raise UsageError(f"--gpu {text!r}: expected a compute capability such as sm_90 (or 9.0)")


# --- resolving ranges over the release table ----------------------------------------------------


def _contains(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def _exact_pin(spec: SpecifierSet) -> Optional[str]:
    pins = [s.version for s in spec if s.operator == "==" and not s.version.endswith(".*")]
    if len(pins) == 1 and _contains(spec, pins[0]):
        return pins[0]
    return None


def _probe_versions(spec: SpecifierSet, extra: Iterable[str] = ()) -> List[str]:
    """Versions around every bound named in `spec` (and `extra`), for ranges no release fits."""
    points = set()
    for text in [s.version for s in spec] + list(extra):
        try:
            v = Version(text.rstrip(".*").rstrip("."))
        except InvalidVersion:
            continue
        rel = list(v.release) + [0] * (3 - len(v.release))
        major, minor, micro = rel[:3]
        for cand in (
            (major, minor, micro),
            (major, minor, micro + 1),
            (major, minor + 1, 0),
            (major + 1, 0, 0),
            (major, max(minor - 1, 0), 0),
        ):
            points.add(".".join(str(p) for p in cand))
    points.add("9999.0.0")
    return sorted((p for p in points if _contains(spec, p)), key=Version)


def resolve(name: str, reqs: Sequence[PlannedRequirement]) -> PlannedPackage:
    """The versions of `name` that these requirements together allow."""
    sources = tuple(r.where for r in reqs)
    written = reqs[0].text.split(";")[0].strip() if len(reqs) == 1 and "@" not in reqs[0].text else ""
    spelled = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", reqs[0].text)
    display = spelled.group(1) if spelled and canonicalize_name(spelled.group(1)) == name else name
    kw = {"written": written, "display": display}
    if any(not r.version_known for r in reqs):
        return PlannedPackage(name, "", (), "unknown", sources, **kw)
    spec = intersect(reqs)
    text = str(spec)
    pin = _exact_pin(spec)
    if pin is not None:
        return PlannedPackage(name, text, (pin,), "pin", sources, **kw)
    releases = RELEASES.get(name)
    if releases:
        allowed = tuple(spec.filter(releases))
        if allowed:
            return PlannedPackage(name, text, allowed, "releases", sources, **kw)
        _raise_if_conflicting(name, reqs, releases)
    return PlannedPackage(name, text, tuple(_probe_versions(spec)), "bounds", sources, **kw)


def _raise_if_conflicting(name: str, reqs: Sequence[PlannedRequirement], releases: Sequence[str]) -> None:
    """Two requirements that each allow releases but none together: pip would refuse too."""
    if len(reqs) < 2:
        return
    if all(list(r.specifier.filter(releases)) or _exact_pin(r.specifier) for r in reqs):
        pair = " and ".join(f"{r.text!r} ({r.where})" for r in reqs[:3])
        raise UsageError(
            f"{reqs[-1].where}: {pair} exclude each other — pip would refuse this plan; "
            f"keep one {name} requirement"
        )


def _infer_triton(torch: PlannedPackage, env: Mapping[str, str]) -> Optional[PlannedPackage]:
    """Linux torch wheels require one Triton: plan for it when the user did not pin one."""
    if env.get("sys_platform") != "linux" or not torch.version_known:
        return None
    if all("+cpu" in v for v in torch.candidates):
        return None
    pins = [TORCH_TRITON_PIN.get(Version(v).public.split("+")[0]) for v in torch.candidates]
    shown = torch.describe()
    if any(p is None for p in pins):
        return PlannedPackage(
            "triton", "", (), "unknown", (), f"{shown} requires a Triton not in the release table"
        )
    allowed = sorted({v for p in set(pins) for v in SpecifierSet(p).filter(RELEASES["triton"])}, key=Version)
    spec = pins[0] if len(set(pins)) == 1 else ""
    resolved = "pin" if len(allowed) == 1 else "releases"
    how = f"{shown} requires triton{spec}" if spec else f"{shown} requires one of triton {', '.join(allowed)}"
    return PlannedPackage("triton", spec, tuple(allowed), resolved, (), how)


def build_input(request: PlanRequest) -> Tuple[PlanInput, List[str], List[str]]:
    """Validate the request and resolve it: (input, files read, lines ignored)."""
    python_version = check_python_version(request.python_version)
    free_threaded = python_version.endswith("t")
    python_version = python_version.rstrip("t")
    cxx = parse_compiler(request.cxx)
    flags = parse_cxxflags(request.cxxflags)
    cuda, driver, gpu = parse_cuda(request.cuda), parse_driver(request.driver), parse_gpu(request.gpu)
    env = marker_environment(python_version)
    read = read_all(request.specs, request.requirement_files, env)
    packages: Dict[str, PlannedPackage] = {}
    for name, reqs in combine(read.requirements).items():
        packages[name] = resolve(name, reqs)
    if "torch" in packages and "triton" not in packages:
        triton = _infer_triton(packages["torch"], env)
        if triton is not None:
            packages["triton"] = triton
    inp = PlanInput(
        packages=packages,
        python_version=python_version,
        cxx=cxx,
        cxxflags=flags,
        cuda=cuda,
        driver=driver,
        gpu_sm=gpu,
        platform=env.get("sys_platform", ""),
        free_threaded=free_threaded,
    )
    return inp, read.files, read.ignored


# --- predicting ---------------------------------------------------------------------------------


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
        return [
            RuleOutcome(
                Status.NOT_APPLICABLE,
                "cannot be predicted from versions alone: run `inductor-doctor check` once installed",
                Basis.VERSION,
            )
        ]
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


def _device(issue: KnownIssue) -> str:
    """Plan findings name the device kind (no device exists yet): `cuda`, `xla`, `toolchain`."""
    if not issue.devices:
        return "toolchain"
    if DeviceKind.TOOLCHAIN in issue.devices:
        return DeviceKind.TOOLCHAIN.value
    return issue.devices[0].value


def predict_issue(inp: PlanInput, issue: KnownIssue) -> List[Finding]:
    """One issue's findings: its hook's outcomes, or the default version prediction."""
    start = time.perf_counter()
    hook = getattr(issue, "predict", None)
    if hook is not None:
        try:
            outcomes = list(hook(inp))
        except Exception as exc:  # a plugin's bug must not take the whole plan down
            outcomes = [
                RuleOutcome(Status.INCONCLUSIVE, f"the prediction failed: {type(exc).__name__}: {exc}")
            ]
        if not outcomes:
            outcomes = [RuleOutcome(Status.NOT_APPLICABLE, "nothing in the plan concerns this issue")]
    else:
        outcomes = predict_from_versions(inp, issue)
    elapsed = time.perf_counter() - start
    planned = {name: list(p.candidates) for name, p in inp.packages.items()}
    return [
        Finding(
            id=issue.id,
            title=issue.title,
            device=o.device or _device(issue),
            status=o.status,
            basis=Basis.VERSION,
            reason=o.reason,
            severity=issue.severity,
            workarounds=tuple(w for w in issue.workarounds if w.applies_to(planned))
            if o.status in (Status.AFFECTED, Status.LIKELY) else (),
            upstream=issue.upstream,
            duration_s=elapsed / len(outcomes),
        )
        for o in outcomes
    ]


def _planned_version(p: Optional[PlannedPackage]) -> Optional[Dict[str, Any]]:
    if p is None:
        return None
    if p.resolved == "pin":
        version = p.candidates[0]
    else:
        version = p.describe()[len(p.name) :].strip() if p.written.startswith(p.name) else p.describe()
    return {"version": version or "any", "planned": True}


def _environment(inp: PlanInput, files: Sequence[str], specs: Sequence[str]) -> Dict[str, Any]:
    """The planned stack, in the probe's shape where it overlaps (so renderers show it), plus
    `plan`: every package with the versions judged and where its requirement came from."""
    gpus = []
    if inp.gpu_sm is not None:
        sm = f"{inp.gpu_sm // 10}.{inp.gpu_sm % 10}"
        gpus.append({"index": 0, "name": f"sm_{inp.gpu_sm}", "sm": sm})
    return {
        "python": {
            "version": inp.python_version + ("t" if inp.free_threaded else ""),
            "platform": inp.platform,
            "free_threaded": inp.free_threaded,
        },
        "torch": _planned_version(inp.package("torch")),
        "triton": _planned_version(inp.package("triton")),
        "xla": _planned_version(inp.package("torch-xla")),
        "cuda": {"runtime_version": inp.cuda, "driver_version": inp.driver, "gpus": gpus},
        "cxx": (
            {
                "command": inp.cxx.command,
                "kind": inp.cxx.kind,
                "version": inp.cxx.version,
                "flags": list(inp.cxxflags),
            }
            if inp.cxx
            else {"command": None, "flags": list(inp.cxxflags)}
        ),
        "plan": {
            "specs": list(specs),
            "requirement_files": list(files),
            "packages": {
                name: {
                    "specifier": p.specifier,
                    "versions": list(p.candidates),
                    "resolved": p.resolved,
                    "sources": list(p.sources),
                    "inferred_from": p.inferred_from,
                }
                for name, p in sorted(inp.packages.items())
            },
            "releases_as_of": RELEASES_AS_OF,
        },
    }


def run_plan(request: PlanRequest, registry: Optional[Registry] = None) -> Report:
    """Predict every known issue for the planned stack; `meta["predicted"]` drives exit code 1.

    Warning-severity predictions are reported but, as in `check`, do not fail the plan.
    """
    from inductor_doctor import __version__
    from inductor_doctor.kb import KB_VERSION
    from inductor_doctor.kb import registry as default_registry

    if not request.specs and not request.requirement_files:
        raise UsageError(
            "plan needs SPECs or -r FILE — e.g. `inductor-doctor plan torch==2.5.1 triton==3.1.0`"
        )
    inp, files, ignored = build_input(request)
    reg = registry if registry is not None else default_registry()
    findings: List[Finding] = []
    for issue in reg:
        findings.extend(predict_issue(inp, issue))
    findings.sort(key=lambda f: (-f.status.rank, f.id, f.device))
    predicted = [
        f.id
        for f in findings
        if f.status in (Status.AFFECTED, Status.LIKELY) and f.severity is Severity.ERROR
    ]
    meta = {
        "predicted": bool(predicted),
        "predicted_ids": sorted(set(predicted)),
        "ignored": list(ignored),
        "releases_as_of": RELEASES_AS_OF,
    }
    return Report(
        command="plan",
        environment=_environment(inp, files, request.specs),
        findings=findings,
        tool_version=__version__,
        kb_version=KB_VERSION,
        meta=meta,
    )
