"""Small helpers that static rules share: version parsing and the common "is it installed" gates."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status


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
