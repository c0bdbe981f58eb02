"""A report's `environment`: the facts, the const_data_ptr ABI verdict, and the host.

`check` and `probe` state the same environment; this is the one place it is made from the facts.
"""

from __future__ import annotations

from typing import Any, Dict

from inductor_doctor.kb.const_data_ptr_abi import judge
from inductor_doctor.probe.host import host_info


def environment_of(facts: Any) -> Dict[str, Any]:
    """The facts, the const_data_ptr ABI verdict the knowledge base reaches on the ABI facts (first
    in `abi`, as `status` and `reason`), and the host."""
    env = facts.to_dict()
    abi = env.get("abi")
    if isinstance(abi, dict):
        status, reason = judge(facts.abi)
        for fact in ("stage", "error"):  # what the verdict is made of; the report states the verdict
            abi.pop(fact, None)
        env["abi"] = {"status": status.value if status else None, "reason": reason, **abi}
    env["host"] = host_info()
    return env
