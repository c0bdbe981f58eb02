"""`why`'s answer: one `Conclusion`, read from the runs in the order of the variations.

A run counts only by its failure signature (`why/signature.py`): it passed, it failed the same way
as the baseline, or it failed differently, and a run that failed differently is shown but decides
nothing. The answer is decided in the variations' order, never by which finished first: an
environment variation that makes the command pass names the cause and proves its workaround,
unless one before it in the order already did; torch.compile disabled that fails *the same way*
says the error is the program's; otherwise the backend step-down names the layer that fails
(Dynamo's tracing, AOTAutograd, Inductor), refined by what the baseline's traceback names (a graph
break, Inductor's lowering, the C++ compile...); and when nothing decides, the conclusion says so
plainly. `why/bisect.py` then narrows an Inductor failure to the subsystem and the op, and
`--versions` adds what other torch releases say (fixed in the newest, a regression, present
upstream).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import Attempt
from inductor_doctor.why.runs import NOT_RUN, OTHER, PASSED, SAME, STOPPED, Tried, decides
from inductor_doctor.why.signature import Signature, stage_words


class Kind(str, enum.Enum):
    """What the answer is: the cause in the environment, the program itself, a compiler layer, a
    torch release, nothing found, or no failure at all."""

    ENVIRONMENT = "environment"
    PROGRAM = "program"
    LAYER = "layer"
    RELEASE = "release"
    NONE = "none"
    BASELINE_PASSED = "baseline-passed"


@dataclass(frozen=True)
class Conclusion:
    """One sentence with its evidence, the variation that decided it, and the workaround it proved."""

    kind: Kind
    sentence: str
    evidence: Tuple[str, ...] = ()
    variation: Optional[str] = None  # the deciding variation's key
    workaround: Optional[str] = None  # proved here, where the kind has one
    unset: Tuple[str, ...] = ()  # the settings whose removal made it pass
    issue: Optional[str] = None  # the known issue whose workaround it was
    layer: Optional[str] = None  # dynamo | aot_autograd | inductor (kind "layer")
    versions: Optional[str] = None  # why --versions tried no other release
    upstream: bool = False  # present in the newest release: report it upstream
    stage: Optional[str] = None  # what the baseline's traceback names (why/signature.py STAGES)
    hints: Tuple[str, ...] = ()  # Dynamo's own hints, for a graph break
    bisect: Optional[Dict[str, Any]] = None  # the compiler bisector's answer (why/bisect.py)
    repro: Optional[str] = None  # the minified reproducer (why/minify.py)
    notes: Tuple[str, ...] = ()  # said after the sentence (a leftover bisector state, ...)

    @property
    def decided(self) -> bool:
        """Whether a cause was named (the exit code: 0, else 1)."""
        return self.kind not in (Kind.NONE, Kind.BASELINE_PASSED)

    def to_dict(self) -> Dict[str, Any]:
        if self.kind is Kind.BASELINE_PASSED:
            out: Dict[str, Any] = {"kind": self.kind.value, "sentence": self.sentence,
                                   "workaround": self.workaround, "evidence": list(self.evidence),
                                   "variation": self.variation}
        else:
            out = {"kind": self.kind.value, **({"layer": self.layer} if self.layer else {}),
                   "variation": self.variation, "unset": list(self.unset), "issue": self.issue,
                   "sentence": self.sentence, "workaround": self.workaround, "evidence": list(self.evidence),
                   "stage": self.stage, "hints": list(self.hints), "bisect": self.bisect, "repro": self.repro}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.versions is not None:
            out["versions"] = self.versions
        if self.upstream:
            out["upstream"] = True
        return out


def baseline_passed(baseline: Attempt, what: str = "exit 0") -> Conclusion:
    return Conclusion(Kind.BASELINE_PASSED, (
        f"The command succeeded here ({what} in {baseline.duration_s:.1f}s): there is no failure to "
        "diagnose. A failure that comes and goes points at the caches or the machine's load; run "
        "`inductor-doctor check`."))


def conclude(baseline: Attempt, tried: List[Tried], scrub: Sequence[str],
             triage: Optional[Dict[str, Any]] = None) -> Conclusion:
    """One sentence with its evidence, from the variations in their order; runs that failed
    differently are in the evidence and decide nothing."""
    sig = baseline.signature(scrub)
    evidence = [f"as it is: exit {baseline.returncode} in {baseline.duration_s:.1f}s: {sig.line}"]
    narrowed = [t for t in tried if t.variation.key.startswith("narrow-") and t.status == PASSED]
    for t in tried:
        if t.variation.key.startswith("narrow-"):
            continue
        if t.status == NOT_RUN and t.attempt is None:
            break
        if not decides(t):
            continue
        v = t.variation
        assert t.attempt is not None
        evidence += _ran(tried, t, scrub)
        if v.kind == V.ENVIRONMENT:
            unset = list(v.unset_env)
            workaround, cause = v.workaround, v.cause
            if narrowed and v.key.startswith("unset:"):
                unset = list(narrowed[0].variation.unset_env)
                workaround = narrowed[0].variation.workaround
                cause = narrowed[0].variation.cause
            if workaround:
                sentence = (f"The cause is {cause}; the workaround, proved here (the command passes with "
                            f"it): `{workaround}`.")
            else:
                sentence = f"The cause is {cause}: the command passes {_with(v.label)}."
            return Conclusion(Kind.ENVIRONMENT, sentence, tuple(evidence), v.key, workaround, tuple(unset),
                              v.issue, stage=sig.stage)
        return Conclusion(Kind.PROGRAM, (
            f"It fails the same way with torch.compile disabled ({sig.raised or sig.line}): the error is in "
            "the program itself (or in torch's eager code), not in the compiler stack; no variation of the "
            "compiler can fix it."), tuple(evidence), v.key, stage=sig.stage)
    return _layer(tried, evidence, triage, sig, scrub)


def _with(label: str) -> str:
    """A variation's label after "passes": "with fresh caches", "without your settings (CXX)"."""
    return label if label.startswith(("with ", "without ")) else f"with {label}"


def _ran(tried: List[Tried], upto: Optional[Tried], scrub: Sequence[str]) -> List[str]:
    """Each run that finished (up to `upto`, which is included), once: its status, and for a run that
    failed differently, its own error (which decides nothing)."""
    out = []
    for t in tried:
        if t.attempt is not None and t.status not in (STOPPED, NOT_RUN):
            line = f"{t.variation.label}: {t.status}"
            if t.status == OTHER:
                line += f" ({t.attempt.fingerprint(scrub)}; decides nothing)"
            out.append(line)
        if t is upto:
            break
    return out


def _layer(tried: List[Tried], evidence: List[str], triage: Optional[Dict[str, Any]], sig: Signature,
           scrub: Sequence[str]) -> Conclusion:
    """No environment variation decided: which layer fails, from the runs that failed the same way
    or passed; the baseline's traceback names the stage within it."""
    by_key = {t.variation.key: t for t in tried}
    disabled, eager, aot = (by_key.get(k) for k in ("compile-disabled", "backend:eager", "backend:aot_eager"))
    evidence += _ran(tried, None, scrub)
    ran = [t for t in (eager, aot) if t is not None and t.attempt is not None and t.status != STOPPED]
    calls = [t.attempt.compile_calls for t in ran if t.attempt is not None]
    if calls and all(c == 0 for c in calls):
        return _none(evidence, "the program never calls torch.compile, so the backend could not be "
                               "stepped down")
    status = {k: (t.status if t is not None and t.attempt is not None else NOT_RUN)
              for k, t in (("disabled", disabled), ("eager", eager), ("aot", aot))}
    aside = _undecided(disabled, scrub)
    if status["eager"] == SAME and (status["disabled"] == PASSED or sig.stage in ("graph_break", "dynamo")):
        return _dynamo(sig, status["disabled"] == PASSED, aside, evidence)
    if status["eager"] == PASSED and status["aot"] == SAME:
        return _layer_answer("aot_autograd", "backend:aot_eager", "AOTAutograd (the traced joint graph)",
                             'backend="eager" passes and backend="aot_eager" fails the same way',
                             'torch.compile(..., backend="eager")', evidence, sig, aside)
    if status["aot"] == PASSED:
        name = stage_words(sig.stage) if sig.stage not in (None, "graph_break", "dynamo", "aot_autograd") \
            else None
        if sig.stage == "accuracy":
            name = "Inductor, whose result differs from eager's"
        answer = _layer_answer("inductor", "backend:aot_eager", name or "Inductor (code generation and its "
                               "compilers)", 'backend="aot_eager" (Dynamo and AOTAutograd) passes',
                               'torch.compile(..., backend="aot_eager")', evidence, sig, aside)
        if triage and triage.get("matched"):
            answer = replace(answer, sentence=answer.sentence + (
                f" Its output matches {triage['id']} ({triage['confidence']}): `{triage['explain']}`."))
        return answer
    return _none(evidence, None)


def _undecided(disabled: Optional[Tried], scrub: Sequence[str]) -> str:
    """torch.compile disabled that failed differently, said where the answer is a layer."""
    if disabled is None or disabled.attempt is None or disabled.status != OTHER:
        return ""
    return (f" torch.compile disabled fails differently ({disabled.attempt.fingerprint(scrub)}), which "
            "decides nothing.")


def _dynamo(sig: Signature, disabled_passed: bool, aside: str, evidence: List[str]) -> Conclusion:
    if sig.raised:  # the program raised it; Dynamo, made to trace everything, reports a graph break
        return Conclusion(Kind.PROGRAM, (
            f"The program itself raises {sig.raised} inside the compiled function: Dynamo, with "
            "fullgraph=True (or error_on_graph_break), reports it as a graph break (Observed exception), and "
            'backend="eager" (Dynamo alone) fails the same way. The error is the program\'s, not the '
            "compiler's." + aside), tuple(evidence), "backend:eager", stage=sig.stage)
    if sig.stage == "graph_break":
        sentence = ("No setting of this machine explains it: the failure is in Dynamo's tracing, a graph "
                    f"break that fullgraph=True (or error_on_graph_break) makes an error ({sig.line}), and "
                    'backend="eager" (Dynamo alone) fails the same way. Drop fullgraph=True to let Dynamo '
                    "split the graph there, or change that code"
                    + (" (Dynamo's hints below)." if sig.hints else "."))
    else:
        sentence = ("No setting of this machine explains it: the failure is in Dynamo's tracing "
                    f"({sig.line}): "
                    'backend="eager" (Dynamo alone) fails the same way'
                    + (", and the program passes with torch.compile disabled." if disabled_passed else "."))
    return Conclusion(Kind.LAYER, sentence + aside, tuple(evidence), "backend:eager", None, layer="dynamo",
                      stage=sig.stage, hints=sig.hints if sig.stage == "graph_break" else ())


def _layer_answer(layer: str, variation: str, name: str, because: str, workaround: Optional[str],
                  evidence: List[str], sig: Signature, aside: str) -> Conclusion:
    sentence = f"No setting of this machine explains it: the failure is in {name} ({sig.line}), since " \
               f"{because}"
    sentence += f"; until it is fixed, {workaround} avoids it." if workaround else "."
    return Conclusion(Kind.LAYER, sentence + aside, tuple(evidence), variation, workaround, layer=layer,
                      stage=sig.stage)


def _none(evidence: List[str], why_not: Optional[str]) -> Conclusion:
    sentence = "None of the variations changes the outcome"
    sentence += f" ({why_not})." if why_not else "."
    sentence += (" If it fails on the newest torch release too, report it upstream with the report block "
                 "(`--report FILE`).")
    return Conclusion(Kind.NONE, sentence, tuple(evidence))


# --- other torch releases (--versions) ------------------------------------------------------------


def wants_releases(conclusion: Conclusion, run_all: bool) -> bool:
    """Other torch releases are tried when the answer is still in the compiler (a layer, or nothing
    found), or with --all."""
    return conclusion.kind in (Kind.LAYER, Kind.NONE) or run_all


def releases_not_tried(conclusion: Conclusion, why_not: str) -> Conclusion:
    return replace(conclusion, versions=f"not tried: {why_not}")


def with_releases(conclusion: Conclusion, tried: List[Tried], installed: str) -> Conclusion:
    """What the newest and the previous release add: fixed in the newest (the answer), present in
    the newest (report it upstream), a regression, or not new."""
    by_role = {t.variation.cause: t for t in tried}
    newest, previous = by_role.get("newest"), by_role.get("previous")
    if newest is not None and newest.status == PASSED:
        release = newest.variation.key.split(":", 1)[1]
        return replace(
            conclusion, kind=Kind.RELEASE, variation=newest.variation.key,
            workaround=newest.variation.workaround,
            sentence=f"Fixed in torch {release}: the command passes with it (in a scratch venv) and "
                     f"fails with torch {installed}; the workaround, proved here: "
                     f"`{newest.variation.workaround}`." + (f" {newest.note}" if newest.note else ""),
            evidence=(*conclusion.evidence, f"{newest.variation.label}: passes"))
    extra = []
    for t in (newest, previous):
        if t is not None and t.attempt is not None and t.attempt.error and t.status == NOT_RUN:
            release = t.variation.key.split(":", 1)[1]
            extra.append(f"torch {release} ({t.variation.cause} release) could not be tried here: "
                         f"{t.attempt.error}.")
    upstream = conclusion.upstream
    if newest is None or newest.status in (SAME, OTHER):
        which = newest.variation.key.split(":", 1)[1] if newest is not None else installed.split("+")[0]
        extra.append(f"It is present in the newest release (torch {which}): report it upstream "
                     "(`--report FILE` writes the report block).")
        upstream = True
    extra += [t.note for t in tried if t.note and t.status != NOT_RUN]
    if previous is not None and previous.status == PASSED:
        release = previous.variation.key.split(":", 1)[1]
        extra.append(f"It is new in torch {installed.split('+')[0]}: torch {release} passes (a regression).")
    elif previous is not None and previous.status in (SAME, OTHER):
        release = previous.variation.key.split(":", 1)[1]
        extra.append(f"torch {release} fails too: it is not new in this release.")
    if not extra:
        return replace(conclusion, upstream=upstream)
    return replace(conclusion, upstream=upstream, sentence=conclusion.sentence + " " + " ".join(extra),
                   evidence=(*conclusion.evidence, *(f"{t.variation.label}: {t.status}" for t in tried)))
