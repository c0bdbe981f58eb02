"""The `triton_installed` step: Triton as it is installed (`packages.triton_info`), before its bundled
ptxas is asked its version (the `triton` step)."""

from __future__ import annotations

from inductor_doctor.probe.packages import triton_info
from inductor_doctor.probe.step import Step

STEP = Step("triton_installed", ("target", "packages"), triton_info)
