"""One known issue's prediction for a planned stack: its `predict` hook, or its version ranges.

Shared by `plan` (every issue for one plan) and `plan --suggest` (every issue for each candidate
build), so that both judge a stack alike. What cannot arise in the planned stack whatever the
machine (a GPU-only issue on a CPU-only build, a Windows issue on a Linux plan, torch_xla's without
it) is ruled out here, before any hook is asked. Every row says which of the plan's three answers it
is (`Finding.answer`): predicted, cannot arise, or cannot be predicted, with what decides it then.
"""

from __future__ import annotations

import time
from typing import List, Optional

from inductor_doctor.core.model import Basis, DeviceKind, Finding, KnownIssue, RuleOutcome, Status
from inductor_doctor.core.plan_input import (
    ANSWERS,
    CANNOT_BE_PREDICTED,
    DECIDED_BY,
    PROBED,
    PlanInput,
    once_installed,
    predict_from_versions,
)


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


def plan_platforms(inp: PlanInput) -> List[str]:
    """The platforms of the planned stack that the checks are not all written for (`kb/_platforms.py`):
    Windows, macOS, a ROCm or an XPU build of torch."""
    from inductor_doctor.kb import _platforms as pf

    found = []
    if inp.platform.startswith("win"):
        found.append(pf.WINDOWS)
    elif inp.platform == "darwin":
        found.append(pf.MACOS)
    if inp.build == "rocm":
        found.append(pf.ROCM)
    elif inp.build == "xpu":
        found.append(pf.XPU)
    return found


def cannot_arise(inp: PlanInput, issue: KnownIssue) -> Optional[str]:
    """Why the issue cannot arise in the planned stack whatever machine it lands on, or None."""
    from inductor_doctor.kb import _platforms as pf

    found = plan_platforms(inp)
    own = pf.OWN_RULES.get(issue.id)
    if own is not None and own not in found:
        return f"it arises on {own} only, and the plan is for {', '.join(found) or inp.platform}"
    if issue.id == pf.ME and not found:
        return f"the plan is for {inp.platform} with a CPU or CUDA torch, which every check is written for"
    if issue.devices and all(d is DeviceKind.XLA for d in issue.devices) and inp.package("torch-xla") is None:
        return "torch-xla is not in the plan"
    return None


def predict_issue(inp: PlanInput, issue: KnownIssue) -> List[Finding]:
    """One issue's findings: its hook's outcomes, or the default version prediction, each with its
    answer (predicted, cannot arise, cannot be predicted and what decides it)."""
    start = time.perf_counter()
    hook = getattr(issue, "predict", None)
    ruled_out = cannot_arise(inp, issue)
    if cpu_only_rules_out(inp, issue):
        outcomes = [RuleOutcome(Status.NOT_APPLICABLE, f"a CPU-only torch ({inp.build_source}): no GPU "
                                "device, so nothing GPU-only can arise", Basis.VERSION)]
    elif ruled_out is not None:
        outcomes = [RuleOutcome(Status.NOT_APPLICABLE, ruled_out, Basis.VERSION)]
    elif hook is not None:
        try:
            outcomes = list(hook(inp))
        except Exception as exc:  # a plugin's bug must not take the whole plan down
            if issue.source == "builtin":
                raise  # the doctor's own: exit 3 (cli.main), never a prediction
            outcomes = [
                RuleOutcome(Status.INCONCLUSIVE, f"the prediction failed: {type(exc).__name__}: {exc}",
                            Basis.VERSION, None, {DECIDED_BY: once_installed(issue.id)})
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
            basis=Basis.STATIC if o.details.get(PROBED) else Basis.VERSION,  # a compiler probed here
            reason=o.reason,
            severity=issue.severity,
            workarounds=tuple(w for w in issue.workarounds if w.applies_to(planned))
            if o.status in (Status.AFFECTED, Status.LIKELY) else (),
            upstream=issue.upstream,
            duration_s=elapsed / len(outcomes),
            answer=ANSWERS[o.status],
            decided_by=_decided_by(o, issue),
        )
        for o in outcomes
    ]


def _decided_by(outcome: RuleOutcome, issue: KnownIssue) -> Optional[str]:
    """What decides a row the plan cannot predict: the hook's word, else the issue's check once installed."""
    if ANSWERS[outcome.status] != CANNOT_BE_PREDICTED:
        return None
    return str(outcome.details.get(DECIDED_BY) or once_installed(issue.id))
