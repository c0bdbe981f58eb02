"""The `xla` step: torch_xla as it is installed (`packages.xla_info`)."""

from __future__ import annotations

from inductor_doctor.probe.packages import xla_info
from inductor_doctor.probe.step import Step

STEP = Step("xla", ("target", "packages"), xla_info)
