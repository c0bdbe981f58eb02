"""A Triton too old for the CUDA ptxas it is pointed at.

Triton runs `ptxas --version` and maps the CUDA release to the PTX ISA it will write
(`ptx_get_version` in triton/backends/nvidia/compiler.py). Triton 3.0 to 3.4 map CUDA 10, 11 and 12
and raise for anything else; 3.5 and later map CUDA 13 on (read from each Triton release:
core/source_history.py). A ptxas of another release than the bundled one is what TRITON_PTXAS_PATH
(or TRITON_PTXAS_BLACKWELL_PATH) points at: the probe lists it with its release
(`facts.cuda.ptxas_binaries`), and the rule reads the installed Triton's own mapping from its file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, triton_source
from inductor_doctor.kb._rules import not_installed
from inductor_doctor.probe._pysource import ptx_maps

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    tr = facts.triton
    if tr is None or not tr.path:
        return not_installed("Triton")
    pointed = [p for p in facts.cuda.ptxas_binaries if not p.source.startswith("bundled")]
    if not pointed:
        return one(Status.NOT_APPLICABLE, "Triton runs the ptxas it bundles (no TRITON_PTXAS_PATH): the CUDA "
                   "release it maps is its own")
    text = triton_source(facts, "backends", "nvidia", "compiler.py") or ""
    label = f"Triton {tr.version}" if tr.version else "the installed Triton"
    for p in pointed:
        if not p.release:
            continue
        maps = ptx_maps(text, p.release)
        if maps is None:
            return one(Status.INCONCLUSIVE, f"{label}'s backends/nvidia/compiler.py has no ptx_get_version "
                       "of a shape the doctor reads")
        if not maps:
            return one(Status.AFFECTED, f"{p.source} points {label} at {p.path}, CUDA {p.release}'s ptxas, "
                       f"a release {label}'s ptx_get_version does not map: every compile raises 'Triton only "
                       f"support CUDA 10.0 or higher, but got CUDA version: {p.release}'", Basis.STATIC,
                       ptxas=p.path)
    said = ", ".join(f"{p.source} {p.path} (CUDA {p.release or '?'})" for p in pointed)
    return one(Status.OK, f"{label} maps the CUDA release of the ptxas it is pointed at: {said}")
