"""The whole verdict policy as a table: rule outcome x device present x canary outcome -> status.

Every row is spelled out, so a change of policy is a change of this table, made on purpose.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import pytest

from inductor_doctor.check.verdict import UNPROVEN, CanaryOutcome, decide
from inductor_doctor.core.model import Basis, Proof, RuleOutcome, Status

A, L, I, O, N = Status.AFFECTED, Status.LIKELY, Status.INCONCLUSIVE, Status.OK, Status.NOT_APPLICABLE  # noqa: E741

RULES: Dict[str, Optional[RuleOutcome]] = {
    "none": None,
    "affected/static": RuleOutcome(A, "the symbol is not exported", Basis.STATIC),
    "affected/version": RuleOutcome(A, "torch 2.5.1 is in the affected range", Basis.VERSION),
    "likely/version": RuleOutcome(L, "some releases the range allows are affected", Basis.VERSION),
    "ok/static": RuleOutcome(O, "the header is there", Basis.STATIC),
    "ok/version": RuleOutcome(O, "torch 2.13 has the fix", Basis.VERSION),
    "inconclusive": RuleOutcome(I, "could not read the file", Basis.STATIC),
    "not-applicable": RuleOutcome(N, "triton is not installed", Basis.STATIC),
}
CANARIES: Dict[str, Optional[CanaryOutcome]] = {
    "none": None,
    "affected": CanaryOutcome(A, "canary reproduced it: NameError", ("NameError",)),
    "ok": CanaryOutcome(O, "canary ran clean", proof="Dynamo captured 1 graph; 3 C++ kernels loaded on cpu"),
    # ran to its end, but nothing shows the path under test ran (compile disabled, an eager fallback)
    "ok/unproven": CanaryOutcome(O, "the canary ran, but nothing was compiled on cpu: no graph captured"),
    "ok/partial": CanaryOutcome(O, "imports only (no GPU to compile on)", partial=True),
    "inconclusive": CanaryOutcome(I, "canary timed out after 2s"),
    "not-applicable": CanaryOutcome(N, "triton is not installed"),
    # The cross-target canary, for a GPU that is not here (check --gpu sm_80): compiled, never run.
    "affected/compiled": CanaryOutcome(A, "compiling fp8e4nv for sm_80 failed: type fp8e4nv not supported",
                                       reach=Proof.COMPILED),
    "ok/compiled": CanaryOutcome(O, "compiled for sm_80 with ptxas 12.9", proof="3 cubins for sm_80",
                                 reach=Proof.COMPILED),
    "ok/compiled/partial": CanaryOutcome(O, "compiled for sm_90 with ptxas-blackwell 13.4", partial=True,
                                         proof="1 cubin for sm_90", reach=Proof.COMPILED),
    "inconclusive/compiled": CanaryOutcome(I, "the compiler aborted: Assertion failed", reach=Proof.COMPILED),
}
ORDER = list(RULES)

#: canary outcome -> the status for each rule, in ORDER, with the device present.
PRESENT: Dict[str, Tuple[Status, ...]] = {
    #                rule: none affS affV likV okS okV inc  n/a
    "none":           (I,   A,   L,   L,   O,  O,  I,   N),
    "affected":       (A,   A,   A,   A,   A,  A,  A,   A),
    "ok":             (O,   I,   O,   O,   O,  O,  O,   O),
    "ok/unproven":    (I,   A,   L,   L,   I,  I,  I,   I),
    "ok/partial":     (O,   A,   L,   L,   O,  O,  I,   N),
    "inconclusive":   (I,   A,   L,   L,   I,  I,  I,   I),
    "not-applicable": (N,   A,   L,   L,   O,  O,  I,   N),
    # compiled for the target, not run there: the same statuses as a run; `proved` says the difference
    "affected/compiled":     (A, A, A, A, A, A, A, A),
    "ok/compiled":           (O, I, O, O, O, O, O, O),
    "ok/compiled/partial":   (O, A, L, L, O, O, I, N),
    "inconclusive/compiled": (I, A, L, L, I, I, I, I),
}  # fmt: skip
#: No device of the issue's kind here: no canary can run; the rule's prediction is all there is.
ABSENT: Tuple[Status, ...] = (N, A, L, L, O, O, I, N)

CASES = [(r, True, c, PRESENT[c][i]) for c in PRESENT for i, r in enumerate(ORDER)]
CASES += [(r, False, "none", ABSENT[i]) for i, r in enumerate(ORDER)]


IDS = [f"rule={r}|device={'here' if p else 'absent'}|canary={c}" for r, p, c, _ in CASES]


@pytest.mark.parametrize("rule,present,canary,expected", CASES, ids=IDS)
def test_every_row_of_the_verdict_table(rule, present, canary, expected):
    verdict = decide(RULES[rule], present, CANARIES[canary], not_run="--static skips canaries", kinds="cuda")
    assert verdict.status is expected, verdict.reason
    assert verdict.reason.strip()


def test_the_basis_says_who_decided():
    assert decide(RULES["affected/version"], True, None).basis is Basis.VERSION
    assert decide(RULES["affected/version"], True, CANARIES["affected"]).basis is Basis.CANARY
    assert decide(RULES["likely/version"], True, CANARIES["ok"]).basis is Basis.CANARY
    assert decide(RULES["likely/version"], True, CANARIES["ok/partial"]).basis is Basis.VERSION
    assert decide(None, False, None, kinds="cuda").reason == "no cuda device here"
    assert decide(None, True, None, not_run="--static skips canaries").reason == (
        "not checked: --static skips canaries")


def test_a_partial_canary_never_overrules_a_prediction_into_ok():
    for rule in ("affected/version", "likely/version", "affected/static"):
        assert decide(RULES[rule], True, CANARIES["ok/partial"]).status is not Status.OK


def test_a_clean_run_without_proof_is_never_ok():
    """Whatever the rule says, a canary that compiled nothing decides nothing, and says why."""
    for rule in ORDER:
        verdict = decide(RULES[rule], True, CANARIES["ok/unproven"])
        assert verdict.basis is not Basis.CANARY or verdict.status is Status.INCONCLUSIVE, rule
        if verdict.basis is Basis.CANARY or RULES[rule] is None:
            assert "nothing was compiled" in verdict.reason, (rule, verdict.reason)


def test_could_not_check_is_never_ok():
    for rule, present, canary, _ in CASES:
        verdict = decide(RULES[rule], present, CANARIES[canary])
        decided_by_someone = (RULES[rule] is not None and RULES[rule].status is Status.OK) or canary in (
            "ok", "ok/partial", "ok/compiled", "ok/compiled/partial")
        assert verdict.status is not Status.OK or decided_by_someone, (rule, present, canary)


def test_a_reproduced_failure_names_the_cause_the_rule_read_first():
    """The canary's upstream message is the symptom; the rule's reason is the cause it read (what
    CXX names, where a header is). Both are said, the cause first; without a prediction, the
    canary's alone."""
    verdict = decide(RULES["affected/static"], True, CANARIES["affected"])
    assert verdict.reason == "the symbol is not exported; canary reproduced it: NameError"
    assert decide(None, True, CANARIES["affected"]).reason == "canary reproduced it: NameError"
    same = RuleOutcome(A, "CXX=x is not found (NameError)", Basis.STATIC)  # the rule quotes it already
    both = decide(same, True, CANARIES["affected"]).reason
    assert both == "CXX=x is not found (NameError); the canary reproduced it"
    assert decide(RULES["ok/static"], True, CANARIES["affected"]).reason == "canary reproduced it: NameError"


def test_every_canary_verdict_says_how_far_its_canary_got():
    """One distinction for every row: a verdict a canary made is `ran` (on the device) or `compiled`
    (for a GPU that is not here); a verdict no canary made has none. A clean compile's `ok` says that
    loading and launching stay unproven; a compile that reproduced the failure needs no caveat."""
    for rule, present, canary, _ in CASES:
        verdict = decide(RULES[rule], present, CANARIES[canary])
        if verdict.basis is not Basis.CANARY:
            assert verdict.proved is None, (rule, canary)
            continue
        expected = CANARIES[canary].reach  # type: ignore[union-attr]
        assert verdict.proved is expected, (rule, canary)
        if expected is Proof.COMPILED and verdict.status is Status.OK:
            assert verdict.reason.endswith(UNPROVEN), (rule, canary, verdict.reason)
        else:
            assert UNPROVEN not in verdict.reason, (rule, canary, verdict.reason)
    compiled_ok = decide(None, True, CANARIES["ok/compiled"])
    assert compiled_ok.reason == f"compiled for sm_80 with ptxas 12.9; {UNPROVEN}"
    assert decide(None, True, CANARIES["ok"]).proved is Proof.RAN
