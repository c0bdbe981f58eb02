"""`inductor-doctor check`: probe, then every known issue on every device: the matrix.

The verb is the flow's own entry, `check.flow.run_check`: the request (`CheckRequest`: which issues,
which devices, static or not, the artifacts, the environment it runs under) in, the `check` document
out; the selection and the two stages are `check/flow.py`'s. `--format node-verdict` is the same
report as a fleet engine's verdict (`fleet/node_verdict.py`).
"""

from __future__ import annotations

from inductor_doctor.check.flow import CheckRequest
from inductor_doctor.check.flow import run_check as check
from inductor_doctor.fleet.node_verdict import node_verdict

__all__ = ["CheckRequest", "check", "node_verdict"]
