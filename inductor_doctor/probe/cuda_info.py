"""The `cuda` step: the CUDA section, with every ptxas Triton may run."""

from __future__ import annotations

from dataclasses import replace

from inductor_doctor.probe.step import Step

STEP = Step("cuda", ("catalog", "ptxas_binaries"),
            lambda catalog, found: replace(catalog[0], ptxas_binaries=found),
            lambda m, known: known["catalog"][0])
