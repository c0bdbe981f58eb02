"""After "the failure is in Inductor": the compiler bisector, its proof, and the minifier.

`why`'s own variations end at a layer. Where that layer is Inductor and nothing of the environment
flips the failure, PyTorch's tools go further, and `why` runs them for the user, each in the
doctor's scratch directory: the compiler bisector down to the subsystem and the op or pass
(`why/bisect.py`), then the minifier for a minimal reproducer (`why/minify.py`). On a torch whose
bisector cannot run a command by itself, the answer says so and stops where it was.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from inductor_doctor.why import bisect as B
from inductor_doctor.why.compare import Compared
from inductor_doctor.why.conclude import Conclusion, Kind
from inductor_doctor.why.minify import minify
from inductor_doctor.why.runs import Session, Tried, stopping


def wanted(conclusion: Conclusion) -> bool:
    """The hand-off follows an answer in Inductor (a crash or a wrong result), nothing else."""
    return conclusion.kind is Kind.LAYER and conclusion.layer == "inductor"


def hand_off(session: Session, conclusion: Conclusion, argv: Sequence[str], python: Optional[str],
             compared: Optional[Compared]) -> Tuple[Conclusion, List[Tried]]:
    """The bisector on the command, its answer proved, the minifier: the conclusion grows by their
    sentences; the proving runs are returned as rows of their own."""
    have = B.offer(python, B.bisector_env(session, session.root)) if python else None
    missing = have.missing() if have else "no Python interpreter with torch was found for the command"
    if missing:
        return replace(conclusion, bisect=B.to_dict(None, have, None, missing), notes=(
            *conclusion.notes, f"The hand-off to the compiler bisector stops here: {missing}.")), []
    assert have is not None and python is not None
    steps = ([] if compared is None else compared.step_args()) + ["--", *argv]
    accuracy = compared is not None
    sig = session.baseline.signature(session.scrub)
    raised = sig.exc_type is not None and (session.baseline.returncode or 0) > 0  # an exception, not a signal
    in_process = have.minify_in_process and raised
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="indoc-why") as pool, stopping(session):
        # the minifier beside the bisector where two runs may go at once (--jobs), else after it
        beside = session.jobs >= 2
        minified = pool.submit(minify, session, python, argv, accuracy, in_process) if beside else None
        found = B.bisect(session, python, steps)
        tried: List[Tried] = []
        said = None
        if found.backend:
            tried = B.prove(session, found, have)
            said = B.sentence(found, have, tried, argv)
            sentence = said["sentence"]
        else:
            sentence = f"The compiler bisector ({len(found.steps)} runs) named nothing: {found.trouble}."
        made = minified.result() if minified else minify(session, python, argv, accuracy, in_process)
    notes = list(conclusion.notes)
    notes.append(made.sentence())
    bisected = B.to_dict(found, have, said, None)
    bisected["minifier"] = made.to_dict()
    return replace(conclusion, sentence=f"{conclusion.sentence} {sentence}", bisect=bisected, repro=made.path,
                   notes=tuple(notes)), tried

