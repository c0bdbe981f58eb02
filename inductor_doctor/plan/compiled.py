"""`plan --gpu sm_XX`: the rows a compile decides, earned with the Triton installed here when it is the
planned one (docs/cross-target.md).

`plan` runs nothing, but for this: when the interpreter running it has the very Triton the plan pins, the
cross-target canary (`check/cross.py`) compiles the canary kernels for the planned GPU with it and its
assembler, about two seconds, and the rows it decides are earned rather than predicted. Otherwise they
stay predictions and `meta["gpu_compile"]` says why.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.core.model import Finding, Status
from inductor_doctor.core.plan_input import PlanInput


def compiled_here(inp: PlanInput, findings: List[Finding],
                  issues: Sequence[Any]) -> Tuple[List[Finding], Optional[Dict[str, Any]]]:
    """`plan --gpu sm_XX`: the rows a compile decides, earned with the Triton of this interpreter when
    it is the planned one (what a compile for the GPU proves: it compiles; loading and launching stay
    unproven); else they stay predictions and `meta["gpu_compile"]` says why."""
    triton = inp.package("triton")
    if inp.gpu_sm is None or triton is None or not triton.version_known or inp.cpu_only:
        return findings, None
    from inductor_doctor.check import cross
    from inductor_doctor.core.gpu_target import parse_target
    from inductor_doctor.core.model import Basis, Proof, RuleOutcome
    from inductor_doctor.probe.packages import packages
    from inductor_doctor.probe.target import query, resolve_python

    python = resolve_python(None)
    installed = packages(query(python)).get("triton")
    if installed not in triton.candidates:
        why = (f"triton {installed} is installed here" if installed else "no Triton is installed here")
        return findings, {"compiled": False, "reason": f"{why}, not the planned {triton.describe()}: the GPU "
                          "rows are predictions (plan --suggest --verify compiles them in a scratch venv)"}
    target = parse_target(f"sm_{inp.gpu_sm}")
    run = cross.run_targets([target], python, issues).get(target.name)
    if run is None:
        return findings, None
    by_id = {i.id: i for i in issues}
    out: List[Finding] = []
    for f in findings:
        issue = by_id.get(f.id)
        decision = None
        if issue is not None and issue.cross is not None and f.device == "cuda":
            decision = cross.judge(issue, RuleOutcome(f.status, f.reason, f.basis), run, issues)
        if decision is None or decision.basis is not Basis.CANARY:
            out.append(f)
            continue
        out.append(replace(f, status=decision.status, basis=decision.basis, reason=decision.reason,
                           evidence=decision.evidence, proved=Proof.COMPILED.value,
                           workarounds=f.workarounds or issue.workarounds  # type: ignore[union-attr]
                           if decision.status in (Status.AFFECTED, Status.LIKELY) else ()))
    tool = run.assembler()
    return out, {"compiled": True, "gpu": target.name, "python": python, "triton": run.triton,
                 "assembler": tool.says() if tool else None, "trouble": run.trouble}
