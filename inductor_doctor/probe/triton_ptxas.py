"""The `triton` step: Triton as installed, with the version of the ptxas it bundles."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from inductor_doctor.core.facts import TritonInfo
from inductor_doctor.probe.cuda import ptxas_version
from inductor_doctor.probe.step import Step


def bundled(triton: Optional[TritonInfo]) -> Optional[TritonInfo]:
    if triton is None or not triton.bundled_ptxas:
        return triton
    return replace(triton, bundled_ptxas_version=ptxas_version(triton.bundled_ptxas)[0])


STEP = Step("triton", ("triton_installed",), bundled, lambda m, known: known["triton_installed"], "ptxas")
