"""`probe`: the toolchain report alone, as a document (a `Report` with no verdicts to list)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from inductor_doctor.check.environment import environment_of
from inductor_doctor.core.model import Report
from inductor_doctor.core.version import __version__


class ProbeDocument(Report):
    """The probe's report: its JSON has the environment and `meta`, and no results or summary."""

    def body(self) -> Dict[str, Any]:
        return {k: v for k, v in super().body().items() if k not in ("results", "summary")}


def probe_report(python: Optional[str] = None, live: bool = False) -> ProbeDocument:
    from inductor_doctor.kb import KB_VERSION
    from inductor_doctor.probe import gather
    from inductor_doctor.probe.target import resolve_python

    target = resolve_python(python)
    facts = gather(target, live=live)
    return ProbeDocument(
        command="probe",
        environment=environment_of(facts),
        findings=[],
        tool_version=__version__,
        kb_version=KB_VERSION,
        meta={"live": live, "duration_s": round(facts.duration_s, 3)},
    )
