"""A prebuilt extension built for another torch: the loader refuses it, or the package skips it.

torch's C++ API (`c10::`, `at::`, `torch::`) has no stable ABI across releases: a library built
against torch 2.8 imports `torch::Library::_def(std::variant<c10::OperatorName, ...>, ...)`, which
torch 2.13 no longer exports, and `import fbgemm_gpu` ends in `undefined symbol: _ZNR5torch7Library4_def...`.
A CUDA build's extension links libc10_cuda.so and libtorch_cuda.so, which a CPU-only torch does not
have. The package may catch the failure and run without its ops (torchvision: `operator
torchvision::nms does not exist`) or check the versions itself and skip its library (torchao,
xformers).

The probe reads every library of an installed package that links torch (probe/extensions.py): the
torch libraries it links and the torch symbols it imports, looked up in this torch's libraries'
own hash tables. A library that needs what this torch lacks cannot load: conclusive. A package
whose metadata pins another torch, or a library linking another CUDA runtime than torch's, is a
prediction.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import matches, not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import ExtensionLib, Facts


def _package(lib: ExtensionLib) -> str:
    if lib.version:
        return f"{lib.distribution} {lib.version}"
    return lib.distribution or os.path.dirname(lib.path)


def _by_package(libs: List[ExtensionLib]) -> Dict[str, List[ExtensionLib]]:
    out: Dict[str, List[ExtensionLib]] = {}
    for lib in libs:
        out.setdefault(_package(lib), []).append(lib)
    return out


def _short(symbol: str, width: int = 72) -> str:
    return symbol if len(symbol) <= width else symbol[: width - 3] + "..."


def _why(lib: ExtensionLib, torch: str) -> str:
    name = os.path.basename(lib.path)
    if lib.missing_libs:
        return (f"{name} links {', '.join(lib.missing_libs)}, which {torch} does not have (built for a "
                "CUDA torch)" if any("cuda" in n for n in lib.missing_libs)
                else f"{name} links {', '.join(lib.missing_libs)}, which {torch} does not have")
    more = f" and {lib.missing_count - 1} more" if lib.missing_count > 1 else ""
    return f"{name} imports {_short(lib.missing_symbols[0])}{more}, which {torch} does not export"


def broken(facts: Facts) -> List[Tuple[str, List[ExtensionLib]]]:
    """The packages with a library this torch cannot load, and those libraries."""
    scan = facts.extensions
    if scan is None:
        return []
    bad = [lib for lib in scan.libs if lib.missing_libs or lib.missing_count]
    return list(_by_package(bad).items())


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    scan = facts.extensions
    if scan is None:
        return one(Status.INCONCLUSIVE, "the installed packages' compiled extensions were not read")
    torch = torch_label(facts)
    bad = broken(facts)
    if bad:
        parts = []
        for package, libs in bad:
            total = sum(1 for lib in scan.libs if _package(lib) == package)
            count = (f"{len(libs)} of its {total} libraries" if len(libs) < total
                     else f"all {total} of its libraries" if total > 1 else "its library")
            parts.append(f"{package}: {count} cannot load ({_why(libs[0], torch)})")
        first = bad[0][1][0]
        said = (f"'{first.missing_libs[0]}: cannot open shared object file'" if first.missing_libs
                else f"'undefined symbol: {_short(first.missing_symbols[0])}'")
        return one(Status.AFFECTED, "; ".join(parts) + f". Importing it fails with {said}, or the package "
                   "runs without its compiled ops", packages=[p for p, _ in bad])
    out: List[RuleOutcome] = []
    pinned = _pinned_elsewhere(facts)
    if pinned:
        out.append(RuleOutcome(Status.LIKELY, "; ".join(pinned) + f": every torch symbol they import is "
                               f"exported by {torch}, but a library built for another release can still "
                               "crash when it registers its ops", Basis.VERSION))
    cuda = _cuda_runtime_skew(facts)
    if cuda:
        out.append(RuleOutcome(Status.LIKELY, cuda, Basis.STATIC))
    if out:
        return out
    if not scan.complete:
        return one(Status.INCONCLUSIVE, f"the time ran out after {len(scan.libs)} libraries of installed "
                   "packages that link torch; the rest were not read")
    if not scan.libs:
        return one(Status.NOT_APPLICABLE, f"no installed package ships a library that links torch "
                   f"({scan.files} shared objects of installed packages read)")
    packages = _by_package(scan.libs)
    names = ", ".join(list(packages)[:4]) + (f" and {len(packages) - 4} more" if len(packages) > 4 else "")
    return one(Status.OK, f"the {len(scan.libs)} libraries that link torch ({names}) import only symbols "
               f"{torch} exports, from libraries it has")


def _pinned_elsewhere(facts: Facts) -> List[str]:
    """`pkg X requires torch==Y` for each package with a library whose metadata pins another torch."""
    scan, t = facts.extensions, facts.torch
    if scan is None or t is None:
        return []
    out: Dict[str, str] = {}
    for lib in scan.libs:
        req = lib.torch_requirement
        if req and matches(t.version, req) is False:
            out[_package(lib)] = f"{_package(lib)} requires torch{req}, and torch {t.version} is installed"
    return list(out.values())


def _cuda_runtime_skew(facts: Facts) -> str:
    """A library linking another CUDA runtime major than the one torch is built with."""
    scan, t = facts.extensions, facts.torch
    if scan is None or t is None or not t.cuda:
        return ""
    major = t.cuda.split(".")[0]
    skewed = [lib for lib in scan.libs if lib.cudart and lib.cudart != major]
    if not skewed:
        return ""
    lib = skewed[0]
    return (f"{_package(lib)}: {os.path.basename(lib.path)} links libcudart.so.{lib.cudart}, and torch is "
            f"built with CUDA {t.cuda}: it was built for another CUDA build of torch")


def advise(facts: Facts) -> Tuple[Workaround, ...]:
    bad = broken(facts)
    t = facts.torch
    if not bad or t is None or not t.version:
        return ISSUE_WORKAROUNDS
    names = " ".join(sorted({lib.distribution for _, libs in bad for lib in libs if lib.distribution}))
    first = Workaround(f"Install the releases of {names} built for torch {t.version} (or the torch they "
                       "were built for); `pip install` of them alone may also move torch", kind="install")
    return Workaround.pick(ISSUE_WORKAROUNDS, first)


ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
