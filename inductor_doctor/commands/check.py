"""`inductor-doctor check`: probe, then every known issue on every device: the matrix.

The verb over `check/flow.py`, which holds the request (`CheckRequest`: which issues, which devices,
static or not, the artifacts), the selection and the two stages; this returns its `check` document.
"""

from __future__ import annotations

from typing import Optional

from inductor_doctor.check.flow import CheckRequest, run_check
from inductor_doctor.core.model import Progress, Report

__all__ = ["CheckRequest", "check"]


def check(request: CheckRequest, progress: Optional[Progress] = None) -> Report:
    """The `check` document of `request`; `progress` hears what is happening."""
    return run_check(request, progress)
