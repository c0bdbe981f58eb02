"""torch.compile(create_block_mask) on CPU: Inductor's C++ fails with "conflicting declaration".

A regression of the torch 2.8.0 nightlies of April 2025 that showed on one CI runner image only
(pytorch/pytorch#151290), fixed by pytorch/pytorch#151887. Host-dependent, so versions can only
predict it; the canary (the upstream unit test, ~30 s of CPU compile) decides. Release wheels do
not reproduce it (2.7.0 and 2.8.0 were tried with g++ 11/12 and clang 16).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import (
    Basis,
    Canary,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: The nightlies that may carry the regression: the issue was filed on 2025-04-15 from a CI run of
#: 2025-04-14, the fix was reported landed on 2025-04-23. When it started is not known: the window
#: opens on 2025-04-01, a guess that errs towards warning.
FIRST_NIGHTLY = 20250401
FIXED_NIGHTLY = 20250424


def nightly_date(version: Optional[str]) -> Optional[int]:
    """`2.8.0.dev20250410+cu128` → 20250410; None for a release or a source build."""
    if not version:
        return None
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    dev = v.dev
    return dev if dev is not None and dev > 20000000 else None


def rule(facts: Facts) -> List[RuleOutcome]:
    """A prediction from the torch version alone; the canary is what decides."""
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch")
    version = torch.version
    date = nightly_date(version)
    if date is None:
        try:
            release = Version(version).release[:2]
        except InvalidVersion:
            release = ()
        if release == (2, 8) and Version(version).is_prerelease:
            return [RuleOutcome(Status.INCONCLUSIVE, f"torch {version} is a 2.8 pre-release of unknown "
                                "date: the regression was in 2.8.0 nightlies of April 2025", Basis.VERSION)]
        return [RuleOutcome(Status.OK, f"torch {version} is not a 2.8.0 nightly of April 2025 (the only "
                            "builds known to hit pytorch#151290)", Basis.VERSION)]
    if FIRST_NIGHTLY <= date < FIXED_NIGHTLY:
        return [RuleOutcome(Status.LIKELY, f"torch {version} is a nightly from before pytorch#151887 "
                            "(2025-04-23); the bug showed only on some hosts", Basis.VERSION)]
    return [RuleOutcome(Status.OK, f"torch {version} is a nightly outside the affected window "
                        "(2025-04 before the 23rd)", Basis.VERSION)]


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan`: the nightly window, but never more than `likely`: the bug showed on some hosts only."""
    from inductor_doctor.core.plan_input import predict_from_versions

    out = []
    for o in predict_from_versions(inp, ISSUE):
        if o.status is Status.AFFECTED:
            o = RuleOutcome(Status.LIKELY, o.reason + "; it failed on some hosts only", o.basis)
        out.append(o)
    return out


ISSUE = KnownIssue(
    id="block-mask-cpu",
    title="torch.compile(create_block_mask) on CPU: C++ compile error \"conflicting declaration\"",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=("pytorch/pytorch#151290", "pytorch/pytorch#151887"),
    aliases=("create-block-mask-cpu", "flex-attention-block-mask-cpu"),
    summary=(
        "On some hosts, torch 2.8.0 nightlies of April 2025 generated C++ for a compiled "
        "flex_attention.create_block_mask on CPU that g++ rejected with \"conflicting declaration\" "
        "(CppCompileError). Fixed by pytorch#151887 (landed by 2025-04-23); release wheels are not "
        "known to be affected."
    ),
    affected={"torch": f">=2.8.0.dev{FIRST_NIGHTLY},<2.8.0.dev{FIXED_NIGHTLY}"},
    fixed={"torch": "2.8.0"},
    signatures=(
        Signature(r"conflicting declaration", note="g++'s wording; the upstream report quotes only this",
                  # Other C++ wrappers declare twice too (AOTInductor, pytorch#111711): in a
                  # user's log, only one about the block mask is this issue.
                  log_context=("block_mask", "flex_attention", "flexattention")),
        Signature(r"CppCompileError", strength="partial", note="any Inductor C++ compile failure"),
    ),
    workarounds=(
        Workaround("Upgrade to a torch release (2.8.0 or later); the bug was in nightlies only",
                   "pip install --upgrade 'torch>=2.8'", "upgrade"),
        Workaround("Call create_block_mask eagerly (do not wrap it in torch.compile); it is a one-off "
                   "mask construction, rarely worth compiling on CPU", None, "code"),
        Workaround("Make Inductor's C++ use the baseline vector ISA (the failure was host-dependent); "
                   "untested against this bug, and the compile line keeps -march=native (it changes the "
                   "vector code Inductor writes, not the compiler's target)",
                   "export ATEN_CPU_CAPABILITY=default", "env"),
    ),
    rule=rule,
    predict=predict,
    canary=Canary(
        "block_mask_cpu.py",
        devices=(DeviceKind.CPU,),
        # ~25-30 s cold on 2 shared cores (most of it the first C++ compile, ISA detection included).
        timeout_s=180.0,
        # The CPU's vector ISAs (a machine fact, target/vec_isa.py) are learned beside it from the
        # start, where no earlier canary has recorded them: off this canary's longest path.
        env={"INDUCTOR_DOCTOR_EARLY_ISA": "1"},
    ),
)
