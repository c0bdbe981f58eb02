"""One known issue's prediction for a planned stack: its `predict` hook, or its version ranges.

Shared by `plan` (every issue for one plan) and `plan --suggest` (every issue for each candidate
build), so that both judge a stack alike. A CPU-only build rules out GPU-only issues here, before
any hook is asked.
"""

from __future__ import annotations

import time
from typing import List

from inductor_doctor.core.model import Basis, DeviceKind, Finding, KnownIssue, RuleOutcome, Status
from inductor_doctor.core.plan_input import PlanInput, predict_from_versions


def _device(issue: KnownIssue) -> str:
    """Plan findings name the device kind (no device exists yet): `cuda`, `xla`, `toolchain`."""
    if not issue.devices:
        return "toolchain"
    if DeviceKind.TOOLCHAIN in issue.devices:
        return DeviceKind.TOOLCHAIN.value
    return issue.devices[0].value


_GPU_KINDS = (DeviceKind.CUDA,)


def cpu_only_rules_out(inp: PlanInput, issue: KnownIssue) -> bool:
    """A CPU-only torch build has no GPU device: an issue that arises only there cannot arise,
    unless its own hook is about CPU builds (torch-cpu-only-build on a GPU host)."""
    if not inp.cpu_only or not issue.devices:
        return False
    if issue.predict is not None and getattr(issue.predict, "build_aware", False):
        return False
    return all(d in _GPU_KINDS for d in issue.devices)


def predict_issue(inp: PlanInput, issue: KnownIssue) -> List[Finding]:
    """One issue's findings: its hook's outcomes, or the default version prediction."""
    start = time.perf_counter()
    hook = getattr(issue, "predict", None)
    if cpu_only_rules_out(inp, issue):
        outcomes = [RuleOutcome(Status.NOT_APPLICABLE, f"a CPU-only torch ({inp.build_source}): no GPU "
                                "device, so nothing GPU-only can arise", Basis.VERSION)]
    elif hook is not None:
        try:
            outcomes = list(hook(inp))
        except Exception as exc:  # a plugin's bug must not take the whole plan down
            if issue.source == "builtin":
                raise  # the doctor's own: exit 3 (cli.main), never a prediction
            outcomes = [
                RuleOutcome(Status.INCONCLUSIVE, f"the prediction failed: {type(exc).__name__}: {exc}")
            ]
        if not outcomes:
            outcomes = [RuleOutcome(Status.NOT_APPLICABLE, "nothing in the plan concerns this issue")]
    else:
        outcomes = predict_from_versions(inp, issue)
    elapsed = time.perf_counter() - start
    planned = {name: list(p.candidates) for name, p in inp.packages.items()}
    return [
        Finding(
            id=issue.id,
            title=issue.title,
            device=o.device or _device(issue),
            status=o.status,
            basis=Basis.VERSION,
            reason=o.reason,
            severity=issue.severity,
            workarounds=tuple(w for w in issue.workarounds if w.applies_to(planned))
            if o.status in (Status.AFFECTED, Status.LIKELY) else (),
            upstream=issue.upstream,
            duration_s=elapsed / len(outcomes),
        )
        for o in outcomes
    ]
