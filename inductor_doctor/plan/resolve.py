"""The `plan` command line and requirements, resolved over the real releases into a `PlanInput`.

Each range is resolved over the releases in `core/releases.py`: a pin stays a pin, a range becomes
every known release it allows, and a range no release fits is judged at its bounds.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import UsageError
from inductor_doctor.core.plan_input import Compiler, PlanInput, PlannedPackage, _contains
from inductor_doctor.core.releases import RELEASES, TORCH_TRITON_PIN
from inductor_doctor.plan.build import planned_build
from inductor_doctor.plan.here import probe_named
from inductor_doctor.plan.requirements import (
    PlannedRequirement,
    check_python_version,
    combine,
    intersect,
    marker_environment,
    read_all,
)


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
    index_url: Optional[str] = None
    #: Compiled artifacts the planned stack must load (`--artifact`): one row each.
    artifacts: List[str] = field(default_factory=list)
    #: Probe the `--cxx` compiler where it is on this machine (`plan/here.py`); `plan` does,
    #: `plan --suggest` judges builds and leaves the machine's compiler to `check`.
    probe_here: bool = False



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


@lru_cache(maxsize=64)
def _triton_allowed(pin: str) -> Tuple[str, ...]:
    """The Triton releases a torch pin allows (the same few pins, asked for every candidate)."""
    return tuple(SpecifierSet(pin).filter(RELEASES["triton"]))


def _infer_triton(torch: PlannedPackage, env: Mapping[str, str],
                  build: Optional[str]) -> Optional[PlannedPackage]:
    """Linux torch wheels of a GPU build require one Triton: plan for it when the user did not pin one."""
    if env.get("sys_platform") != "linux" or not torch.version_known or build == "cpu":
        return None
    pins = [TORCH_TRITON_PIN.get(Version(v).public.split("+")[0]) for v in torch.candidates]
    shown = torch.describe()
    if any(p is None for p in pins):
        return PlannedPackage(
            "triton", "", (), "unknown", (), f"{shown} requires a Triton not in the release table"
        )
    allowed = sorted({v for p in set(pins) for v in _triton_allowed(p)}, key=Version)
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
    if not read.requirements and not request.artifacts:
        shown = ", ".join(str(f) for f in request.requirement_files) or "the command line"
        raise UsageError(f"{shown} names no requirement (empty, or only comments and options): "
                         "nothing to plan")
    packages: Dict[str, PlannedPackage] = {}
    for name, reqs in combine(read.requirements).items():
        packages[name] = resolve(name, reqs)
    index_urls = tuple(([request.index_url] if request.index_url else []) + read.index_urls)
    build, build_cuda, build_source, variant = planned_build(packages.get("torch"), index_urls, env)
    if "torch" in packages and "triton" not in packages:
        triton = _infer_triton(packages["torch"], env, build)
        if triton is not None:
            packages["triton"] = triton
    inp = PlanInput(
        packages=packages,
        python_version=python_version,
        cxx=cxx,
        cxxflags=flags,
        cuda=cuda or build_cuda,
        driver=driver,
        gpu_sm=gpu,
        platform=env.get("sys_platform", ""),
        free_threaded=free_threaded,
        build=build,
        build_source=build_source,
        index_urls=index_urls,
        variant=variant,
        marker_env=env,
        cxx_here=probe_named(cxx) if request.probe_here else None,
    )
    return inp, read.files, read.ignored
