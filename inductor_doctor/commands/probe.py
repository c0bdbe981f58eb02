"""`probe`: the toolchain report alone, as a document (a `Report` with no verdicts to list)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from inductor_doctor.core.model import Report
from inductor_doctor.core.version import __version__
from inductor_doctor.probe.host import host_info


def environment_of(facts: Any) -> Dict[str, Any]:
    """A report's `environment`: the facts, the const_data_ptr ABI verdict the knowledge base
    reaches on the ABI facts (first in `abi`, as `status` and `reason`), and the host."""
    from inductor_doctor.kb.const_data_ptr_abi import judge

    env = facts.to_dict()
    abi = env.get("abi")
    if isinstance(abi, dict):
        status, reason = judge(facts.abi)
        for fact in ("stage", "error"):  # what the verdict is made of; the report states the verdict
            abi.pop(fact, None)
        env["abi"] = {"status": status.value if status else None, "reason": reason, **abi}
    env["host"] = host_info()
    return env


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
