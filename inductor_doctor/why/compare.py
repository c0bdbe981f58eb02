"""`why --compare`: a command that exits 0 but computes a wrong result, made a failure to diagnose.

How the command exposes its output: when `INDUCTOR_DOCTOR_WHY_OUTPUT` is set, the program saves what it
computed there with `torch.save` (a tensor, or a tuple, list or dict of tensors and numbers):

    out = model(x)
    if os.environ.get("INDUCTOR_DOCTOR_WHY_OUTPUT"):
        torch.save(out, os.environ["INDUCTOR_DOCTOR_WHY_OUTPUT"])

`why --compare` first runs the command eagerly, with torch.compile disabled (`TORCH_COMPILE_DISABLE=1`,
or, where that fails, as torch 2.13 does for `fullgraph=True`, with `backend="eager"`: Dynamo alone),
and keeps that output as the reference. From then on every run (the baseline, each variation, each
step of the compiler bisector) is the command under `target/why_step.py --reference`: it runs as it
is, and fails, with one line `inductor_doctor.OutputMismatch: ...`, when its output differs from the
reference beyond `atol + rtol * |eager|` (default 1e-3 each, Dynamo's own `repro_tolerance`). So the
same differential diagnosis and the same bisection apply to a wrong result as to a crash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional, Sequence

from inductor_doctor.core.codes import UsageError
from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import run_attempt
from inductor_doctor.why.runs import Session, launch

OUTPUT_VAR = "INDUCTOR_DOCTOR_WHY_OUTPUT"
#: Dynamo's own accuracy tolerance (torch._dynamo.config.repro_tolerance).
DEFAULT_TOLERANCE = 1e-3


@dataclass
class Compared:
    """The eager reference and the tolerance every compared run uses."""

    reference: str
    how: str  # how the reference was made
    rtol: float
    atol: float

    def step_args(self) -> List[str]:
        """The step wrapper's options (the compiler bisector's steps add their own `--log`)."""
        return ["--reference", self.reference, "--rtol", repr(self.rtol), "--atol", repr(self.atol)]

    def to_dict(self) -> dict:
        return {"reference": self.how, "rtol": self.rtol, "atol": self.atol}


def wrap(python: str, argv: Sequence[str], compared: Compared) -> List[str]:
    """The command as every compared run runs it: under the step wrapper, against the reference."""
    from inductor_doctor.target import script

    return [python, str(script("why_step.py")), *compared.step_args(), "--", *argv]


def reference(session: Session, rtol: float, atol: float) -> Compared:
    """Run the command eagerly and keep its output. A usage error when neither eager run saved
    anything (the program does not write `$INDUCTOR_DOCTOR_WHY_OUTPUT`)."""
    path = os.path.join(session.root, "reference.pt")
    ways = [V.Variation("reference:disabled", "torch.compile disabled (TORCH_COMPILE_DISABLE=1)", V.CONTROL,
                        {"TORCH_COMPILE_DISABLE": "1", OUTPUT_VAR: path}),
            V.Variation("reference:eager", 'backend="eager" (Dynamo only)', V.LAYER, {OUTPUT_VAR: path},
                        backend="eager", count_compiles=True)]
    said: Optional[str] = None
    for n, way in enumerate(ways):
        session.say(f"the eager reference: {way.label}")
        done = run_attempt(launch(session, way, 40 + n))
        if done.passed and os.path.exists(path):
            return Compared(path, way.label, rtol, atol)
        said = "it exited 0 but saved nothing" if done.passed else \
            f"it failed: {done.fingerprint(session.scrub)}"
    raise UsageError(f"--compare: the eager run of the command gave no output to compare ({said}); the "
                     f"program saves its result with torch.save to ${OUTPUT_VAR} when that is set "
                     "(docs/at-failure.md)")
