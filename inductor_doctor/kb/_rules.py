"""Small helpers that static rules share: version parsing and the common "is it installed" gates."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_label

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def parse_version(text: Optional[str]) -> Optional[Version]:
    """A version without its local part (`2.5.1+cu124` → `2.5.1`); None when absent or garbage."""
    if not text:
        return None
    try:
        v = Version(text)
    except InvalidVersion:
        return None
    return Version(v.public)


def release(text: Optional[str]) -> Optional[Version]:
    """The release only, so that `2.8.0.dev20250410` compares as `2.8.0` where a rule wants that."""
    v = parse_version(text)
    return Version(".".join(str(p) for p in v.release)) if v else None


def matches(version: Optional[str], spec: str) -> Optional[bool]:
    """Whether `version` satisfies `spec`; None when the version is unknown."""
    v = parse_version(version)
    if v is None:
        return None
    try:
        return SpecifierSet(spec).contains(v, prereleases=True)
    except InvalidSpecifier:
        return None


def not_installed(what: str) -> List[RuleOutcome]:
    return [RuleOutcome(Status.NOT_APPLICABLE, f"{what} is not installed", Basis.STATIC)]


def unknown(what: str) -> List[RuleOutcome]:
    return [RuleOutcome(Status.INCONCLUSIVE, f"could not determine {what}", Basis.STATIC)]


def nightly_window(spec: str) -> Tuple[int, int]:
    """The dates of a nightly range written as `>=2.8.0.dev20250401,<2.8.0.dev20250424`: (first, fixed)."""
    first, fixed = (int(d) for d in re.findall(r"\.dev(\d{8})", spec))
    return first, fixed


def not_cuda_torch(facts: Facts, what_it_lacks: str) -> Optional[List[RuleOutcome]]:
    """Where a CUDA issue does not apply: torch is not installed, or is no CUDA build (CPU-only or
    ROCm), said as "<torch label> <what_it_lacks>"; None for a CUDA torch."""
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    if t.hip or not t.cuda:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} {what_it_lacks}")
    return None


def cuda_toolkit(facts: Facts) -> Tuple[Optional[List[RuleOutcome]], Any]:
    """`(the outcome where there is nothing to judge, the probed CUDA toolkit)` for the rules about
    the toolkit torch's CUDA builds use: not a CUDA torch, or a toolkit never probed, stops them."""
    not_cuda = not_cuda_torch(facts, "builds no CUDA code")
    if not_cuda:
        return not_cuda, None
    if facts.toolkit is None:
        return [RuleOutcome(Status.INCONCLUSIVE, "the CUDA toolkit was not probed", Basis.STATIC)], None
    return None, facts.toolkit


def no_cxx_compiler(facts: Facts) -> Optional[List[RuleOutcome]]:
    """Where a rule about Inductor's C++ compiler does not apply: torch is not installed, or the
    probe found no C++ compiler (cxx-compiler-missing says so); None when there is one to judge."""
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    if not facts.cxx.path:
        return one(Status.NOT_APPLICABLE, "no C++ compiler (see cxx-compiler-missing)")
    return None


def planned_outcome(hits: List[str], misses: List[str], unknown: Optional[str]) -> List[RuleOutcome]:
    """A `plan` verdict over the planned releases: `affected` when all hit, `likely` when some do,
    `inconclusive` (with the reason `unknown`, None when every release was known) when none hit but
    some are unknown, else `ok` with the first release that is fine."""
    if hits and not misses and unknown is None:
        return [RuleOutcome(Status.AFFECTED, hits[0], Basis.VERSION)]
    if hits:
        return [RuleOutcome(Status.LIKELY, f"{hits[0]} (one of the planned releases)", Basis.VERSION)]
    if unknown is not None:
        return [RuleOutcome(Status.INCONCLUSIVE, unknown, Basis.VERSION)]
    return [RuleOutcome(Status.OK, misses[0], Basis.VERSION)]
