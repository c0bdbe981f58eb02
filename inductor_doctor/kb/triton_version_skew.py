"""torch and Triton from different release pairs: Inductor's imports of Triton internals break.

Every torch release is built and tested against one Triton (its wheel pins it: 2.5 ↔ 3.1,
2.6 ↔ 3.2, 2.7 ↔ 3.3, 2.8 ↔ 3.4, ...), and Inductor imports Triton internals that move between
releases. The best-known break: torch 2.6 falls back to `from triton.compiler.compiler import
AttrsDescriptor`, which Triton 3.3 removed, so `import torch._inductor...` itself fails, even for a
CPU-only compile (triton-lang/triton#6080). The rule compares the installed Triton with the pin
and reads both packages' sources for that import; the canary imports Inductor's Triton-facing
modules (and, with a GPU, compiles one kernel), which is where a skew surfaces.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import (
    is_gpu_torch,
    one,
    torch_source,
    triton_source,
    unshadow_triton,
    version_tuple,
)
from inductor_doctor.kb._rules import not_installed, parse_version

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: torch 2.6's hints.py: the fallback import when triton.backends.compiler has no AttrsDescriptor.
_HARD_ATTRS_IMPORT = re.compile(
    r"except ImportError:\s*\n\s*from triton\.compiler\.compiler import AttrsDescriptor\b"
)
_TRITON_HAS_ATTRS = re.compile(r"^\s*(?:class AttrsDescriptor\b|from \S+ import .*\bAttrsDescriptor\b)", re.M)
_PIN = re.compile(r"(?:==|~=|===)\s*v?(\d+(?:\.\d+)*)")


def _pinned(facts: Facts) -> Optional[str]:
    """The Triton release torch was built with: its wheel's pin, else the release table."""
    pin = facts.torch.triton_pin if facts.torch else None
    m = _PIN.search(pin or "")
    if m:
        return m.group(1)
    try:
        from inductor_doctor.core.releases import TORCH_TRITON_PIN
    except ImportError:  # pragma: no cover - the table ships with the package
        return None
    v = parse_version(facts.torch.version if facts.torch else None)
    m = _PIN.search(TORCH_TRITON_PIN.get(str(v), "")) if v else None
    return m.group(1) if m else None


def attrs_descriptor_break(facts: Facts) -> Optional[bool]:
    """True when torch's hints.py must import AttrsDescriptor and this Triton has none; None: unknown."""
    hints = torch_source(facts, "_inductor", "runtime", "hints.py")
    if hints is None:
        return None
    if not _HARD_ATTRS_IMPORT.search(hints):
        return False
    sources = [triton_source(facts, "backends", "compiler.py"),
               triton_source(facts, "compiler", "compiler.py")]
    if all(s is None for s in sources):
        return None
    return not any(_TRITON_HAS_ATTRS.search(s) for s in sources if s)


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    triton = facts.triton
    if triton is None or not triton.version:
        return not_installed("triton")
    tv = triton.version
    if triton.shadowed_install:  # the release that runs is the copy's (triton-missing names the shadow)
        if not triton.imported_version:
            return one(Status.INCONCLUSIVE, f"`import triton` finds {triton.path}, whose release is unknown, "
                       f"not the installed triton {tv} (see triton-missing)", Basis.STATIC)
        tv = f"{triton.imported_version} (the copy at {triton.path}, not the installed {tv})"
    if attrs_descriptor_break(facts):
        return one(Status.LIKELY, f"torch {facts.torch.version} imports AttrsDescriptor from "
                   f"triton.compiler.compiler, which triton {tv} no longer has: `import "
                   "torch._inductor` fails (pinned triton: " + (_pinned(facts) or "?") + ")", Basis.STATIC)
    pinned = _pinned(facts)
    if pinned is None:
        return one(Status.INCONCLUSIVE, f"torch {facts.torch.version} pins no triton and its release "
                   f"pair is unknown; installed triton {tv}", Basis.VERSION)
    have, want = version_tuple(triton.imported_version or triton.version, 2), version_tuple(pinned, 2)
    if have == want:
        return one(Status.OK, f"triton {tv} is the release torch {facts.torch.version} is built for "
                   f"({pinned})", Basis.VERSION)
    if not is_gpu_torch(facts):
        return one(Status.OK, f"triton {tv} is not torch {facts.torch.version}'s pair ({pinned}), but "
                   "this CPU-only torch imports nothing from it that this triton lacks", Basis.STATIC)
    older = have is not None and want is not None and have < want
    return one(Status.LIKELY, f"triton {tv} is {'older' if older else 'newer'} than the {pinned} torch "
               f"{facts.torch.version} was built and tested with: Inductor's Triton code may not "
               "import or compile", Basis.VERSION, pinned=pinned, installed=tv)


def _torch_pin(version: str) -> Optional[Tuple[str, Optional[str]]]:
    """(the Triton requirement of torch `version`'s Linux wheel, its marker), from the snapshot;
    a release newer than the snapshot takes the nearest of its X.Y line."""
    from inductor_doctor.core.releases import torch_release

    found = torch_release(version)
    if found is None or not found[1].get("triton"):
        return None
    return found[1]["triton"], found[1].get("triton_marker")


def _pin_applies(marker: Optional[str], inp: PlanInput) -> bool:
    """Whether torch's wheel requires its Triton on the planned platform and Python."""
    if not marker or not inp.marker_env:
        return True
    from packaging.markers import InvalidMarker, Marker

    try:
        return Marker(marker).evaluate(dict(inp.marker_env))
    except (InvalidMarker, ValueError):
        return True


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan torch==2.13.0 triton==3.0.0`: every planned (torch, Triton) pair against the Triton
    that torch release's own wheel requires (`Requires-Dist: triton==...`, read into the snapshot)."""
    torch, triton = inp.package("torch"), inp.package("triton")
    if torch is None or triton is None:
        return one(Status.NOT_APPLICABLE, "needs torch and triton in the plan", Basis.VERSION)
    if triton.inferred_from:
        return one(Status.OK, f"the plan takes triton from torch's own requirement ({triton.inferred_from})",
                   Basis.VERSION)
    if not torch.version_known or not triton.version_known:
        return one(Status.INCONCLUSIVE, "the planned torch or triton version is known only once installed; "
                   "pin both to decide", Basis.VERSION)
    attrs = SpecifierSet(ISSUE.affected["torch"]), SpecifierSet(ISSUE.affected["triton"])
    skewed: List[str] = []
    paired: List[str] = []
    unknown: List[str] = []
    for tv in torch.candidates:
        pin = _torch_pin(tv)
        enforced = not inp.cpu_only and pin is not None and _pin_applies(pin[1], inp)
        for rv in triton.candidates:
            attrs_break = attrs[0].contains(Version(tv).public, prereleases=True) and \
                attrs[1].contains(rv, prereleases=True)
            why = (f"torch {tv} imports AttrsDescriptor from triton.compiler.compiler, which triton {rv} no "
                   "longer has: `import torch._inductor` fails, even on a CPU")
            if enforced:
                assert pin is not None
                if SpecifierSet(pin[0]).contains(rv, prereleases=True):
                    paired.append(f"triton {rv} is the release torch {tv} requires (triton{pin[0]})")
                else:
                    then = why if attrs_break else "Inductor's Triton code may not import or compile"
                    skewed.append(f"torch {tv} requires triton{pin[0]}, and the plan has triton {rv}: pip "
                                  f"refuses the pair, and forced in (--no-deps) {then}")
            elif attrs_break:
                skewed.append(why + " (nothing makes pip refuse this pair)")
            elif inp.cpu_only:
                paired.append(f"torch {tv} is a CPU-only build ({inp.build_source}), which requires no "
                              f"Triton and imports nothing from triton {rv} that it lacks")
            elif pin is None:
                unknown.append(f"torch {tv}")
            else:
                paired.append(f"torch {tv} requires no Triton here ({pin[1]})")
    # pip enforces a pin it reads: of a range, it picks a pair that matches if there is one. What it
    # does not enforce (a CPU-only torch requires no Triton) is installed as planned.
    broken = [s for s in skewed if "nothing makes pip refuse" in s]
    if skewed and not paired and not unknown:
        return one(Status.AFFECTED, skewed[0], Basis.VERSION)
    if broken:
        return one(Status.LIKELY, f"{broken[0]} (one of the planned pairs)", Basis.VERSION)
    if unknown:
        return one(Status.INCONCLUSIVE, f"{unknown[0]} is not in the release snapshot: its Triton pin is "
                   "unknown", Basis.VERSION)
    if skewed:
        return one(Status.OK, f"pip picks a pair that matches: {paired[0]}", Basis.VERSION)
    return one(Status.OK, paired[0], Basis.VERSION)


def advise(facts: Facts) -> List[Workaround]:
    """A skew that comes from a copy shadowing the installed Triton is fixed by taking the copy off
    the import path (triton-missing names it); installing the pinned release again changes nothing."""
    first = unshadow_triton(facts)
    if first is None:
        return list(ISSUE_WORKAROUNDS)
    return list(Workaround.pick(ISSUE_WORKAROUNDS, first, drop=["pip install", "uv pip install"]))


ISSUE = known_issue(__name__)
#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = ISSUE.workarounds
