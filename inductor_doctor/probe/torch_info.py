"""The `torch` step: torch as its files say, with the arch list the GPU catalog gave it."""

from __future__ import annotations

from inductor_doctor.probe.step import Step

STEP = Step("torch", ("catalog",), lambda catalog: catalog[1])
