"""A run's failure signature: what failed, where in the compile stack, and whether it is the baseline's.

`why` judges every re-run against the baseline by its signature only: the same failure, another
failure, or a pass. The signature is read from the final Python traceback of the output (the
exception line after its frames, which need not end in "Error": Dynamo's `Unsupported`,
Inductor's `InductorError: LoweringException: ...`), else from the last line that names an
exception, else from a signal or the last line. Temporary paths and addresses are scrubbed, so two
runs of one failure compare equal.

The *stage* says which layer the traceback itself names: Dynamo's tracing (a graph break, or
another Dynamo error), AOTAutograd, Inductor's lowering, its graph passes or its code generation,
the C++ or Triton compile of the generated code, a wrong result (`why --compare`), or none of them
(the program's own code, or torch's eager kernels). The re-runs decide the layer; the stage refines
the words.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

#: The last line that names an exception, for output with no Python traceback.
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Warning)[\w.]*)(?::.*)?$",
                       re.M)
_TYPE = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
_FRAME = re.compile(r'^\s+File "([^"]+)", line \d+')
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_WRAPPED = re.compile(r"\bgot ([A-Za-z_]\w*(?:Error|Exception))\(")
#: Dynamo's record of an exception the traced program raised itself, before its "Observed exception".
_OBSERVED = re.compile(r"^torch\._dynamo\.exc\.Observed\w*: raised exception (([A-Za-z_]\w*)\(.*\))$", re.M)
TRACEBACK = "Traceback (most recent call last):"
#: What `target/why_step.py` prints when a compiled run's outputs differ from eager's.
MISMATCH = "inductor_doctor.OutputMismatch"

#: Stages, in words (the conclusion's).
STAGES = {
    "graph_break": "Dynamo's tracing (a graph break)",
    "dynamo": "Dynamo's tracing",
    "aot_autograd": "AOTAutograd",
    "lowering": "Inductor's lowering",
    "passes": "Inductor's graph passes",
    "codegen": "Inductor's code generation",
    "inductor": "Inductor",
    "cpp_compile": "the C++ compile of Inductor's generated code",
    "triton_compile": "the Triton compile of Inductor's generated kernels",
    "accuracy": "a wrong result (compiled and eager outputs differ)",
}


@dataclass(frozen=True)
class Signature:
    """One failure, as `why` compares it."""

    line: str  # what a person reads: "torch._dynamo.exc.Unsupported: Data-dependent branching"
    exc_type: Optional[str] = None
    message: str = ""
    raised_in: Optional[str] = None  # the innermost frame's file of the final traceback
    stage: Optional[str] = None  # a key of STAGES, or None: the program's own code or unknown
    wrapped: Optional[str] = None  # the program's error type that Dynamo met on fake tensors
    hints: Tuple[str, ...] = ()  # Dynamo's own "Hint:" lines
    passed: bool = False
    raised: Optional[str] = None  # the program's own exception that Dynamo reports ("Observed exception")

    def same_as(self, other: Signature) -> bool:
        """The same failure: the same exception and message; or, for Dynamo's report of an error the
        program raised on fake tensors (`TorchRuntimeError ... got RuntimeError(...)`), that error
        raised by the program itself, outside the compile stack, whose real kernels word it
        differently."""
        if self.passed or other.passed:
            return self.passed == other.passed
        if (self.exc_type, self.message) == (other.exc_type, other.message) and self.line == other.line:
            return True
        for a, b in ((self, other), (other, self)):
            program = b.stage is None and not in_compile_stack(b.raised_in)
            if a.wrapped and b.exc_type == a.wrapped and program:
                return True
        return False


def read(output: bytes, returncode: Optional[int] = 0, scrub: Sequence[str] = ()) -> Signature:
    """The signature of a run's output (the kept part of it) and exit status."""
    if returncode == 0:
        return Signature("passed", passed=True)
    text = output[-256 * 1024:].decode("utf-8", errors="replace")
    for path in sorted(scrub, key=len, reverse=True):
        if path:
            text = text.replace(path, "<tmp>")
    text = _HEX.sub("0x?", text)
    found = _from_traceback(text)
    if found is not None:
        return found
    mismatch = [ln for ln in text.splitlines() if ln.startswith(MISMATCH)]
    if mismatch:
        return Signature(mismatch[-1].strip()[:300], MISMATCH, mismatch[-1].partition(":")[2].strip(),
                         stage="accuracy")
    lines = list(_EXC_LINE.finditer(text))
    if lines:
        line = lines[-1].group(0).strip()
        exc_type, _, message = line.partition(":")
        return Signature(line[:300], exc_type, message.strip()[:300], stage=_stage(exc_type, message, []))
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return Signature(f"killed by {name}", name)
    last = (text.strip().splitlines() or [""])[-1].strip()
    return Signature(last[:300] or f"exit status {returncode}")


def _from_traceback(text: str) -> Optional[Signature]:
    at = text.rfind(TRACEBACK)
    if at < 0:
        return None
    lines = text[at + len(TRACEBACK):].splitlines()[1:]
    frames: List[str] = []
    for n, raw in enumerate(lines):
        frame = _FRAME.match(raw)
        if frame:
            frames.append(frame.group(1))
            continue
        if not raw.strip() or raw[:1].isspace():
            continue
        found = _TYPE.match(raw.strip())
        if not found:
            return None
        exc_type, message = found.group(1), (found.group(2) or "").strip()
        rest = lines[n + 1:n + 40]
        if exc_type.endswith("BackendCompilerFailed") and rest:  # backend='inductor' raised:\n<inner>
            inner = _TYPE.match(rest[0].strip())
            if inner:
                message = rest[0].strip()
        if exc_type == MISMATCH:
            stage: Optional[str] = "accuracy"
        else:
            stage = _stage(exc_type, message, frames)
        wrapped = None
        if exc_type.endswith("TorchRuntimeError"):
            inner = _WRAPPED.search("\n".join(rest))
            wrapped = inner.group(1) if inner else None
        hints = tuple(h.strip()[len("Hint:"):].strip() for h in rest if h.strip().startswith("Hint:"))
        raised = None
        if exc_type.endswith(".Unsupported") and message.startswith("Observed exception"):
            observed = _OBSERVED.findall(text[:at])
            if observed:
                raised, wrapped = observed[-1][0][:300], observed[-1][1]
        line = f"{exc_type}: {message}" if message else exc_type
        return Signature(line[:300], exc_type, message[:300], frames[-1] if frames else None, stage, wrapped,
                         hints[:4], raised=raised)
    return None


def _stage(exc_type: str, message: str, frames: List[str]) -> Optional[str]:
    """Which layer the traceback names, innermost first."""
    words = f"{exc_type}: {message}"
    if "CppCompileError" in words or "C++ compile error" in words:
        return "cpp_compile"
    if exc_type.startswith("triton.") or "CompilationError" in words or "PassManager::run failed" in words:
        return "triton_compile"
    if "LoweringException" in words:
        return "lowering"
    if exc_type.startswith("torch._dynamo.exc.") and not exc_type.endswith("BackendCompilerFailed"):
        return "graph_break" if exc_type.endswith(".Unsupported") else "dynamo"
    for path in reversed(frames):
        p = path.replace("\\", "/")
        if "/torch/_inductor/" in p or "/torch/fx/passes/graph_transform_observer" in p:
            if "/fx_passes/" in p or "graph_transform_observer" in p or "/pattern_matcher" in p:
                return "passes"
            if p.endswith("/lowering.py"):
                return "lowering"
            if "/codegen/" in p or p.endswith(("/scheduler.py", "/ir.py")):
                return "codegen"
            return "inductor"
        if "/torch/_functorch/" in p:
            return "aot_autograd"
        if "/torch/_dynamo/" in p and "eval_frame.py" not in p:
            return "dynamo"
    if exc_type.startswith("torch._inductor."):
        return "inductor"
    return None


def in_compile_stack(path: Optional[str]) -> bool:
    """Whether a frame's file is torch's compile stack (Dynamo, AOTAutograd, FX, Inductor)."""
    p = (path or "").replace("\\", "/")
    return any(part in p for part in ("/torch/_dynamo/", "/torch/_functorch/", "/torch/_inductor/",
                                      "/torch/fx/"))


def stage_words(stage: Optional[str]) -> Optional[str]:
    return STAGES.get(stage) if stage else None
