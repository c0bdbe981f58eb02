"""A third-party package imports a Triton API this Triton does not have.

Triton has no stable Python API below `triton.jit` and `triton.language`: Triton 3.2 removed
`triton.ops` (bitsandbytes before 0.45 imports `triton.ops.matmul_perf_model` at import time, so
`import bitsandbytes` fails with "No module named 'triton.ops'"), AttrsDescriptor moved between
modules and went, and new modules appear (`triton.language.target_info`, which vLLM's kernels
import). torch pins one Triton release, so a torch upgrade moves Triton under every library.

The probe (probe/triton_imports.py) reads the imports of the installed packages that use Triton and
looks each up in the installed Triton's own files; in a log, `annotate` names the Triton releases
whose files have the module or name, read from every release (core/source_history.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

from inductor_doctor.core import source_history as history
from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, TritonImport


def _what(m: TritonImport) -> str:
    return f"{m.module}.{m.name}" if m.name else m.module


def rule(facts: Facts) -> List[RuleOutcome]:
    tr = facts.triton
    if tr is None or not tr.path:
        return not_installed("Triton")
    scan = facts.triton_imports
    if scan is None:
        return one(Status.INCONCLUSIVE, "the installed packages' Triton imports were not read")
    label = f"Triton {tr.version}" if tr.version else "the installed Triton"
    if scan.missing:
        by_package: Dict[str, List[TritonImport]] = {}
        for m in scan.missing:
            by_package.setdefault(f"{m.distribution} {m.version}", []).append(m)
        parts = []
        for package, found in by_package.items():
            first = found[0]
            names = sorted({_what(m) for m in found})
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            parts.append(f"{package} imports {names[0]}{more} ({first.path}:{first.line}), which {label} "
                         f"does not have{_history_clause(first, tr.version)}")
        return one(Status.AFFECTED, "; ".join(parts) + ": importing it fails", Basis.STATIC,
                   packages=list(by_package))
    if not scan.complete:
        return one(Status.INCONCLUSIVE, f"the time ran out after {len(scan.packages)} packages; the rest of "
                   "the installed packages' Triton imports were not read")
    if not scan.packages:
        return one(Status.NOT_APPLICABLE, "no installed package besides torch uses Triton's API")
    return one(Status.OK, f"the {scan.imports} Triton imports of {', '.join(scan.packages[:4])}"
               f"{' and more' if len(scan.packages) > 4 else ''} resolve in {label}")


def _history_clause(m: TritonImport, installed: Optional[str]) -> str:
    said = triton_sentence(m.module, m.name, installed)
    return f" ({said})" if said else ""


# --- in a log ---------------------------------------------------------------------------------------

_CANNOT = re.compile(r"cannot import name '(\w+)' from '(triton(?:\.[\w.]+)?)'")
_NO_MODULE = re.compile(r"No module named '(triton\.[\w.]+)'")
_NO_ATTR = re.compile(r"module '(triton(?:\.\w+)*)' has no attribute '(\w+)'")


def annotate(lines: Sequence[str], versions: Mapping[str, Sequence[str]]) -> Optional[str]:
    text = "\n".join(lines)
    stated = next((v for v in (history.release_of(x) for x in versions.get("triton") or []) if v), None)
    for pattern, named in ((_CANNOT, True), (_NO_ATTR, True), (_NO_MODULE, False)):
        m = pattern.search(text)
        if m is None:
            continue
        if pattern is _CANNOT:
            return triton_sentence(m.group(2), m.group(1), stated)
        if named:
            return triton_sentence(m.group(1), m.group(2), stated)
        return triton_sentence(m.group(1), None, stated)
    return None


def triton_sentence(module: str, name: Optional[str], stated: Optional[str]) -> Optional[str]:
    """`triton.ops is in Triton 2.0.0 to 3.1.0 (gone in 3.2.0); the log's Triton is 3.2.0`."""
    releases = history.triton_releases()
    if name is None:
        runs, what = history.triton_module(module), module
    else:
        found = history.triton_name(module, name)
        if found is None:  # a module the history follows no names of: its presence at least
            runs, what = history.triton_module(module), module
            if not runs:
                return None
        else:
            module_runs, runs = found
            what = f"{module}.{name}"
            if not module_runs:
                runs, what = [], module
    if runs:
        sentence = f"{what} is in {history.said(runs, releases, 'Triton')}"
    else:
        sentence = f"no Triton release from {releases[0]} to {releases[-1]} has {what}"
    release = history.release_of(stated) if stated else None
    if release and runs:
        has = history.covers(runs, release, releases[-1])
        if has is False:
            sentence += f"; Triton {release} does not"
    return sentence
