"""The solver behind `plan --suggest`: the newest torch build with no known issue on a machine.

Candidates are the torch releases of the release snapshot, newest first, each as the build this
machine would install: PyPI's wheel for the platform where the machine has a GPU (its CUDA and
arch list read from the wheel), then the other CUDA variants PyTorch's own index serves for that
release where the snapshot read them from the release's build scripts (newest CUDA first, each
installed with `--index-url https://download.pytorch.org/whl/cuXXX`), and the CPU build from
PyTorch's CPU index where the machine has no GPU. Each
candidate is judged as `plan` judges a spec (`plan torch==V --gpu sm_XX --driver D
--python-version P --cxx C`, once per GPU), after the checks a pip install itself would fail
(the user's own requirements, a CPython wheel for this Python, the manylinux glibc floor). The
first candidate with nothing predicted is the answer; every newer one is passed over with its
first reason. When every candidate has an issue, the issues no candidate avoids are said, and the
newest candidate with nothing else is offered with them.

Only the snapshot is read: no network, no torch, nothing run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import Finding, Severity, Status
from inductor_doctor.core.plan_input import PlanInput
from inductor_doctor.plan.resolve import PlanRequest, build_input

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.kb import Registry

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class Machine:
    """What the suggestion is for: this machine's probed facts, or the ones given."""

    gpus: Tuple[int, ...] = ()  # compute capabilities, 90 for sm_90
    gpu_names: Tuple[str, ...] = ()
    driver: Optional[str] = None
    python_version: str = ""  # "3.11.7" or "3.13t"
    glibc: Optional[str] = None
    cxx: Optional[str] = None  # a compiler name plan can read: "g++-12", "clang++-19"
    sys_platform: str = "linux"
    machine: str = "x86_64"
    source: str = "this machine"  # or "the options given"

    def gpu_label(self, i: int) -> str:
        name = self.gpu_names[i] if i < len(self.gpu_names) and self.gpu_names[i] else ""
        sm = f"sm_{self.gpus[i]}"
        return f"{name} ({sm})" if name and name != sm else sm


@dataclass(frozen=True)
class Candidate:
    """One torch build to install: a release, its variant and where it comes from."""

    torch: str
    variant: str  # "cpu", "cu130"
    cuda: Optional[str]
    index_url: Optional[str]  # None: PyPI
    triton: Optional[str] = None  # the Triton release torch's wheel requires here
    xla: Optional[str] = None
    archs: Tuple[str, ...] = ()
    source: str = ""

    @property
    def label(self) -> str:
        return f"torch {self.torch} {self.variant}"

    def requirements(self) -> List[str]:
        local = f"+{self.variant}" if self.index_url and self.variant.startswith("cu") else ""
        reqs = [f"torch=={self.torch}{local}"]
        if self.triton:
            reqs.append(f"triton=={self.triton}")
        if self.xla:
            reqs.append(f"torch_xla=={self.xla}")
        return reqs

    def pip(self) -> str:
        index = f" --index-url {self.index_url}" if self.index_url else ""
        return "pip install " + " ".join(self.requirements()) + index

    def uv(self) -> str:
        index = f" --index-url {self.index_url}" if self.index_url else ""
        return "uv pip install " + " ".join(self.requirements()) + index

    def to_dict(self) -> Dict[str, object]:
        return {"torch": self.torch, "variant": self.variant, "cuda": self.cuda,
                "index_url": self.index_url, "triton": self.triton, "torch_xla": self.xla,
                "archs": list(self.archs), "source": self.source, "pip": self.pip(), "uv": self.uv()}


@dataclass
class Judged:
    candidate: Candidate
    reasons: List[str] = field(default_factory=list)  # one line each, first decides
    issues: List[str] = field(default_factory=list)  # ids of the predicted issues
    prefilter: bool = False  # passed over before any issue was asked (pip itself would refuse)
    findings: List[Finding] = field(default_factory=list)
    by_gpu: List[List[str]] = field(default_factory=list)  # predicted issue ids per GPU (or the CPU)

    @property
    def ok(self) -> bool:
        return not self.reasons


@dataclass
class Solution:
    machine: Machine
    chosen: Optional[Judged]
    passed_over: List[Judged]  # the newer candidates, newest first
    unavoidable: Dict[str, str] = field(default_factory=dict)  # issue id -> why, when none is clean
    per_gpu: Dict[str, Optional[str]] = field(default_factory=dict)  # GPUs apart, when none covers all
    notes: List[str] = field(default_factory=list)
    considered: int = 0


def machine_from_facts(facts: Facts) -> Machine:
    """The machine the probe describes: every GPU the driver lists, its driver, the target's Python
    and glibc, and the C++ compiler Inductor would use (as a name `plan` reads: `g++-12`)."""
    import platform
    import sys

    sms, names = [], []
    for g in facts.cuda.driver_gpus or facts.cuda.gpus:
        try:
            major, minor = (int(x) for x in str(g.sm or "").split(".")[:2])
        except ValueError:
            continue
        sms.append(major * 10 + minor)
        names.append(g.name)
    cxx = None
    if facts.cxx.kind in ("gcc", "clang") and facts.cxx.version:
        cxx = f"{'g++' if facts.cxx.kind == 'gcc' else 'clang++'}-{facts.cxx.version.split('.')[0]}"
    py = facts.python.version or f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    if getattr(facts.python, "free_threaded", False):
        py += "t"
    return Machine(gpus=tuple(sms), gpu_names=tuple(names), driver=facts.cuda.driver_version,
                   python_version=py, glibc=facts.python.glibc, cxx=cxx, sys_platform=sys.platform,
                   machine=platform.machine().lower(), source="this machine (probe)")


def _vt(text: Optional[str]) -> Tuple[int, ...]:
    try:
        return Version(text or "0").release
    except InvalidVersion:
        return (0,)


def _python_tag(python_version: str) -> str:
    free = python_version.endswith("t")
    parts = python_version.rstrip("t").split(".")
    return f"{parts[0]}.{parts[1]}" + ("t" if free else "")


def candidates(machine: Machine, want_xla: bool = False) -> List[Candidate]:
    """Every torch release of the snapshot, newest first, as the build this machine would get."""
    from inductor_doctor.core.releases import RELEASES, index_variants, pypi_wheel, snapshot

    snap = snapshot()
    out: List[Candidate] = []
    triton_releases = RELEASES.get("triton", ())
    xla_releases = set(RELEASES.get("torch-xla", ()))
    for version in sorted(snap["torch"], key=Version, reverse=True):
        wheel = pypi_wheel(version, machine.sys_platform, machine.machine)
        entry = snap["torch"][version]
        xla = version if want_xla and version in xla_releases else None
        if machine.gpus:
            if wheel is None or wheel.get("build") != "cuda":
                continue
            pin = entry.get("triton")
            triton = None
            if pin:
                allowed = list(SpecifierSet(pin).filter(triton_releases))
                triton = max(allowed, key=Version) if allowed else None
            pypi_tag = "cu" + str(wheel["cuda"]).replace(".", "")
            out.append(Candidate(version, pypi_tag, wheel["cuda"], None,
                                 triton, xla, tuple(wheel.get("archs") or ()), f"{wheel['wheel']} on PyPI"))
            variants = index_variants(version, machine.sys_platform, machine.machine)
            for tag in sorted(variants, key=lambda t: _vt(variants[t]["cuda"]), reverse=True):
                if tag == pypi_tag:
                    continue
                v = variants[tag]
                archs = tuple(v.get("archs") or ()) + tuple(v.get("ptx") or ())
                out.append(Candidate(version, tag, v["cuda"], v["index_url"], None, xla, archs,
                                     f"PyTorch's {tag} index; {v['source']['archs']}"))
        else:
            out.append(Candidate(version, "cpu", None, CPU_INDEX if machine.sys_platform == "linux" else None,
                                 None, xla, (), "PyTorch's CPU index (the CPU build of every release)"))
    return out


def _prefilter(c: Candidate, machine: Machine, pins: Sequence[Tuple[SpecifierSet, str]]) -> Optional[str]:
    """Why pip itself would not install the candidate here, or None."""
    from inductor_doctor.core.releases import pypi_wheel, torch_release

    for spec, where in pins:
        if not spec.contains(c.torch, prereleases=True):
            return f"excluded by {where}"
    wheel = pypi_wheel(c.torch, machine.sys_platform, machine.machine) or {}
    pythons = wheel.get("pythons") or (torch_release(c.torch) or ("", {}))[1].get("pythons") or []
    tag = _python_tag(machine.python_version)
    if pythons and tag not in pythons:
        return f"no CPython {tag} wheel (it has {', '.join(pythons)})"
    floor = wheel.get("glibc")
    if floor and machine.glibc and _vt(machine.glibc) < _vt(floor):
        return f"needs glibc >= {floor} ({wheel.get('manylinux')}); this machine has {machine.glibc}"
    return None


def _judge(c: Candidate, machine: Machine, reg: Registry, extra_specs: Sequence[str]) -> Judged:
    """Every known issue for the candidate on each GPU (or the CPU alone), as `plan` predicts it."""
    from inductor_doctor.plan.predict import predict_issue

    judged = Judged(c)
    gpus: Sequence[Optional[int]] = machine.gpus or (None,)
    spec = f"torch=={c.torch}" + ("+cpu" if c.variant == "cpu" and machine.sys_platform == "linux" else "")
    if c.index_url and c.variant.startswith("cu"):
        spec = f"torch=={c.torch}+{c.variant}"  # an index variant: plan judges that build, not PyPI's
    request = PlanRequest(specs=[spec] + ([f"torch_xla=={c.xla}"] if c.xla else []) + list(extra_specs),
                          driver=machine.driver, python_version=machine.python_version or None,
                          cxx=machine.cxx)
    base: PlanInput = build_input(request)[0]
    for i, gpu in enumerate(gpus):
        inp = replace(base, gpu_sm=gpu)
        ids: List[str] = []
        for issue in reg:
            for f in predict_issue(inp, issue):
                if f.status in (Status.AFFECTED, Status.LIKELY) and f.severity is Severity.ERROR:
                    where = f" on {machine.gpu_label(i)}" if gpu is not None and f.device == "cuda" else ""
                    ids.append(f.id)
                    if f.id in judged.issues and f.device != "cuda":
                        continue  # said once for the whole machine
                    judged.findings.append(f)
                    if f.id not in judged.issues:
                        judged.issues.append(f.id)
                    judged.reasons.append(short_reason(f, c, machine, where))
        judged.by_gpu.append(ids)
    return judged


def short_reason(f: Finding, c: Candidate, machine: Machine, where: str) -> str:
    """One line a user reads in a list: what the wheel needs against what the machine has."""
    if f.id == "cuda-driver-too-old" and c.cuda:
        from inductor_doctor.kb.cuda_driver_too_old import major_floor

        floor = major_floor(int(c.cuda.split(".")[0]))
        return f"{f.id}: CUDA {c.cuda} needs driver >= {floor}; this one is {machine.driver}"
    if f.id == "torch-gpu-arch-missing" and c.archs:
        gpu = where[len(" on "):] if where else "the GPU"
        return f"{f.id}: built for {' '.join(c.archs)}: no kernel for {gpu}"
    text = f"{f.id}{where}: {f.reason}"
    return text if len(text) <= 160 else text[:157].rstrip() + "..."


Pins = List[Tuple[SpecifierSet, str]]


def _torch_pins(request_files: Sequence[str], machine: Machine) -> Tuple[Pins, List[str]]:
    """The user's own torch requirements (what a candidate must meet), and their other specs."""
    from inductor_doctor.plan.requirements import marker_environment, read_all

    if not request_files:
        return [], []
    from pathlib import Path

    env = marker_environment(machine.python_version.rstrip("t"))
    read = read_all([], [Path(f) for f in request_files], env)
    pins: List[Tuple[SpecifierSet, str]] = []
    extra: List[str] = []
    for r in read.requirements:
        if r.name == "torch":
            pins.append((r.specifier, f"{r.where} ({r.text.split(';')[0].strip()})"))
        elif r.name in ("triton", "torch-xla") and r.version_known and not r.constraint:
            extra.append(r.text.split(";")[0].strip())
    return pins, extra


def solve(machine: Machine, requirement_files: Sequence[str] = (), want_xla: bool = False,
          registry: Optional[Registry] = None, extra_specs: Optional[Sequence[str]] = None) -> Solution:
    """The newest candidate with no known issue on `machine`, and why each newer one is not it."""
    from inductor_doctor.kb import registry as default_registry

    reg = registry if registry is not None else default_registry()
    pins, extra = _torch_pins(requirement_files, machine)
    if extra_specs is not None:
        extra = list(extra_specs)
    cands = candidates(machine, want_xla)
    solution = Solution(machine, None, [])
    judged_all: List[Judged] = []
    pypi_judged: Dict[str, Judged] = {}
    for c in cands:
        if c.index_url and c.variant.startswith("cu"):
            sibling = pypi_judged.get(c.torch)
            if sibling is None or not _variant_may_help(c, sibling, machine):
                continue
        if want_xla and c.xla is None:
            j = Judged(c, [f"no torch_xla {c.torch} release"], prefilter=True)
        else:
            why = _prefilter(c, machine, pins)
            j = Judged(c, [why], prefilter=True) if why else _judge(c, machine, reg, extra)
        solution.considered += 1
        if c.index_url is None:
            pypi_judged[c.torch] = j
        if j.ok:
            solution.chosen = j
            break
        solution.passed_over.append(j)
        judged_all.append(j)
    if solution.chosen is None:
        _fallback(solution, judged_all, machine, reg, extra)
    if not cands:
        solution.notes.append(f"the release snapshot has no torch build for {machine.sys_platform} "
                              f"{machine.machine}" + (" with CUDA" if machine.gpus else ""))
    return solution


#: The issues another CUDA variant of the same release can avoid: its kernels and its CUDA's driver.
VARIANT_ISSUES = ("torch-gpu-arch-missing", "cuda-driver-too-old")


def _variant_may_help(c: Candidate, pypi: Judged, machine: Machine) -> bool:
    """Whether an index variant is worth judging: its PyPI sibling (same release) was installable and
    failed on something a variant changes, and this one has the kernels of a GPU the sibling lacked
    or a CUDA the driver runs where the sibling's did not. Anything else it would fail alike, so the
    solver's cost stays that of the releases, not of every release times its variants."""
    from inductor_doctor.kb._gpus import support
    from inductor_doctor.kb.cuda_driver_too_old import major_floor

    if pypi.prefilter or not set(pypi.issues) & set(VARIANT_ISSUES):
        return False
    if "cuda-driver-too-old" in pypi.issues and c.cuda and machine.driver:
        floor = major_floor(int(c.cuda.split(".")[0]))
        if floor and _vt(floor) <= _vt(machine.driver):
            return True
    for i, gpu in enumerate(machine.gpus):
        missed = i < len(pypi.by_gpu) and "torch-gpu-arch-missing" in pypi.by_gpu[i]
        if missed and support(gpu, c.archs)[0] != "none":
            return True
    return False


def _fallback(solution: Solution, judged: List[Judged], machine: Machine, reg: Registry,
              extra: Sequence[str]) -> None:
    """No candidate is clean: say what none avoids, offer the newest with nothing else, and, for
    several GPUs, what each would get alone."""
    installable = [j for j in judged if not j.prefilter]
    if not installable:
        return
    common = set(installable[0].issues)
    for j in installable[1:]:
        common &= set(j.issues)
    for j in installable:
        if set(j.issues) <= common:
            solution.chosen = j
            solution.passed_over = solution.passed_over[:solution.passed_over.index(j)]
            break
    first = installable[0]
    for f in first.findings:
        if f.id in common and f.id not in solution.unavoidable:
            solution.unavoidable[f.id] = f.reason
    if len(set(machine.gpus)) > 1 and any(f.device == "cuda" for f in installable[0].findings):
        # One install serves every GPU: none does; say what each GPU would get alone.
        solution.chosen = None
        solution.unavoidable = {}
        solution.passed_over = list(judged)
        for i in range(len(machine.gpus)):
            own = [set(j.by_gpu[i]) for j in installable]
            common_i = set.intersection(*own)
            best = next((j for j, ids in zip(installable, own) if ids <= common_i), None)
            label = best.candidate.label if best else None
            if best and common_i:
                label = f"{label} (with {', '.join(sorted(common_i))}, which no release avoids)"
            solution.per_gpu[machine.gpu_label(i)] = label
