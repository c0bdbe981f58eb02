"""The verdict policy, whole and in one place: what a rule and a canary together are worth.

Inputs, per issue and device: the static rule's outcome (its status and basis, or none), whether the
device is here at all, and what the canary did (nothing, or its classified outcome, including whether
it could exercise the whole failure path or only part of it). The principles:

* a version table alone is a prediction: `affected` from versions is `likely` until a canary shows it;
* a canary that reproduced the bug decides (`affected`);
* a canary that ran the whole failure path clean overrules a prediction (`ok`), but not conclusive
  static evidence (a missing header, an unexported symbol): that disagreement is `inconclusive`;
* a clean canary is `ok` only with proof that the path under test ran (graphs captured, kernels
  compiled and loaded on its device: `CanaryOutcome.proof`, gathered by the harness); one that ran
  but compiled nothing counts as a canary that could not check: `inconclusive`, saying so;
* a canary that exercised only part of the path (imports only, no GPU to compile on) never turns a
  prediction into `ok`;
* a canary that failed otherwise, or could not run, leaves a prediction standing, else it is
  `inconclusive` with the reason — "could not check" is never `ok`;
* every verdict a canary made says how far that canary got (`Decision.proved`, `Proof`): it `ran` on
  the device, or it only `compiled` for it (the cross-target canary, for a GPU that is not here:
  `check --gpu sm_80`). A compile that reproduced the failure is as good as a run (the compiler
  fails the same way on the GPU); a clean compile is "compiled for sm_80", and its `ok` says that
  loading and launching stay unproven.

`tests/verdicts/test_verdict_table.py` spells out every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from inductor_doctor.core.model import Basis, Proof, RuleOutcome, Status


@dataclass(frozen=True)
class CanaryOutcome:
    """A canary run, classified: its status, the one-line reason, the evidence lines."""

    status: Status  # AFFECTED | OK | INCONCLUSIVE | NOT_APPLICABLE
    reason: str
    evidence: Tuple[str, ...] = ()
    partial: bool = False  # it could exercise only part of the failure path (and that part ran clean)
    #: What the canary made the stack do (graphs, kernels, on which device); None: nothing shows that
    #: the path under test ran, and a clean run is then no `ok`.
    proof: Optional[str] = None
    #: How far it could go on the device: the whole path ran there, or (a GPU that is not here) its
    #: kernels were only compiled for it.
    reach: Proof = Proof.RAN


@dataclass(frozen=True)
class Decision:
    """One cell of the matrix as the verdict table decides it: its status, what it rests on, and why.
    (`inductor_doctor.Verdict` is preflight's answer for a device: the one public `Verdict`.)"""

    status: Status
    basis: Basis
    reason: str
    evidence: Tuple[str, ...] = ()
    #: How far the canary behind a canary verdict got (None: no canary decided it).
    proved: Optional[Proof] = None


#: What a clean compile for a GPU that is not here leaves unproven, said on every such `ok`.
UNPROVEN = "loading and launching on the GPU unproven"


def predicted(rule: RuleOutcome) -> Tuple[Status, Basis]:
    """A rule's outcome on its own: `affected` from a version table is only `likely`."""
    if rule.status is Status.AFFECTED and rule.basis is Basis.VERSION:
        return Status.LIKELY, Basis.VERSION
    return rule.status, rule.basis


def _conclusive_affected(rule: Optional[RuleOutcome]) -> bool:
    return rule is not None and rule.status is Status.AFFECTED and rule.basis is not Basis.VERSION


def _predicts_bug(rule: Optional[RuleOutcome]) -> bool:
    return rule is not None and predicted(rule)[0] in (Status.AFFECTED, Status.LIKELY)


def decide(
    rule: Optional[RuleOutcome],
    device_present: bool,
    canary: Optional[CanaryOutcome],
    not_run: str = "no static rule applies",
    kinds: str = "",
) -> Decision:
    """The verdict for one issue on one device. `not_run` says why no canary ran, where none did."""
    decision = _decide(rule, device_present, canary, not_run, kinds)
    if decision.basis is not Basis.CANARY or canary is None:
        return decision
    reason = decision.reason
    if canary.reach is Proof.COMPILED and decision.status is Status.OK and UNPROVEN not in reason:
        reason = f"{reason}; {UNPROVEN}"
    return Decision(decision.status, decision.basis, reason, decision.evidence, canary.reach)


def _decide(
    rule: Optional[RuleOutcome],
    device_present: bool,
    canary: Optional[CanaryOutcome],
    not_run: str,
    kinds: str,
) -> Decision:
    if not device_present or canary is None:
        if rule is None:
            if not device_present:
                return Decision(Status.NOT_APPLICABLE, Basis.STATIC, f"no {kinds or 'such'} device here")
            return Decision(Status.INCONCLUSIVE, Basis.STATIC, f"not checked: {not_run}")
        status, basis = predicted(rule)
        # A rule may back its reason with lines of its own (platform-not-covered's rows by how each
        # is decided): they are the row's evidence, as a canary's output is.
        return Decision(status, basis, rule.reason, tuple(rule.details.get("evidence", ())))

    if canary.status is Status.AFFECTED:
        # The canary shows the upstream symptom; a rule that predicted it read the cause (what CXX
        # names, where the header is): the cause comes first, the reproduction after it.
        if _predicts_bug(rule) and rule is not None and rule.reason and rule.reason not in canary.reason:
            said = canary.reason.split(": ", 1)[-1]
            tail = "the canary reproduced it" if said and said in rule.reason else canary.reason
            return Decision(Status.AFFECTED, Basis.CANARY, f"{rule.reason}; {tail}", canary.evidence)
        return Decision(Status.AFFECTED, Basis.CANARY, canary.reason, canary.evidence)

    if canary.status is Status.OK and not canary.partial and canary.proof is None:
        canary = CanaryOutcome(Status.INCONCLUSIVE, canary.reason, canary.evidence, reach=canary.reach)

    if canary.status is Status.OK and not canary.partial:
        if _conclusive_affected(rule):
            assert rule is not None
            return Decision(Status.INCONCLUSIVE, Basis.STATIC,
                           f"{rule.reason}; yet the canary ran clean: {canary.reason}")
        if _predicts_bug(rule):
            assert rule is not None
            return Decision(Status.OK, Basis.CANARY,
                           f"{canary.reason}; the prediction did not hold here ({rule.reason})")
        return Decision(Status.OK, Basis.CANARY, canary.reason)

    if canary.status is Status.OK:  # partial: the part it could run was clean
        if rule is None:
            return Decision(Status.OK, Basis.CANARY, canary.reason)
        status, basis = predicted(rule)
        return Decision(status, basis,
                        f"{rule.reason}; the canary could run only part of it: {canary.reason}")

    if canary.status is Status.NOT_APPLICABLE:
        if rule is None:
            return Decision(Status.NOT_APPLICABLE, Basis.CANARY, canary.reason)
        status, basis = predicted(rule)
        return Decision(status, basis, f"{rule.reason}; canary: {canary.reason}")

    # inconclusive: it failed in another way, timed out, or could not run
    if rule is not None and predicted(rule)[0] in (Status.AFFECTED, Status.LIKELY):
        status, basis = predicted(rule)
        return Decision(status, basis, f"{rule.reason}; canary inconclusive: {canary.reason}",
                        canary.evidence)
    return Decision(Status.INCONCLUSIVE, Basis.CANARY, canary.reason, canary.evidence)
