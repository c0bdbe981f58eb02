"""Whether a signature's match in a user's log stands in the issue's own context.

An error line alone is not a diagnosis when other bugs print the same words: `NameError: name
's2' is not defined` is this issue's only when the kernel is a user's `@triton.jit` one,
`failed to map segment from shared object` only when the library is a compile cache's. A
signature says what that context leaves in a log (`Signature.anchor`, `log_context`) and what
gives another cause away (`against`). Three outcomes:

* the issue's own error in its context: exact ("this is X");
* a weak match (a `partial` signature, or the error without its context): "this looks like X",
  with the reason, but only where something else in the log ties it to the issue's subject
  (`Signature.subject`: a compile cache's path, a Triton kernel, Inductor's or Dynamo's frames,
  torch in the paths). A generic message in a log with none of that is another program's error,
  and says nothing;
* the sign of a look-alike the issue's page names as another cause (`against`): no match at all;
* a weak match with nothing of its subject around it, of a signature the machine can decide
  (`Signature.decided_by`: a bare "GLIBCXX_3.4.32' not found", a bare missing header): "possibly
  X", naming the one fact that decides and the command that checks it here
  (`explain --log FILE --check`), instead of nothing.

A canary's output needs none of this: there the canary is the context. The log is read once
(`triage/stream.py`): anchors within a few lines of a match are judged while the match's block
is in memory (`near_found`), log-wide ones are looked for once as the log streams by and only
their first sighting is kept (`Sightings`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple

from inductor_doctor.core.model import Signature

#: How far a line-scoped anchor is looked for, at most, in bytes either side of the match: a
#: huge single-line log costs no more than a short one.
MAX_NEAR_BYTES = 64 * 1024

#: What ties a log to an issue's subject, by name (`Signature.subject` names these; an entry that
#: is not a name is a regex of its own). Each is looked for anywhere in the log.
SUBJECTS: Dict[str, str] = {
    # a compile cache's own paths, or the variables that move them
    "compile-cache": (
        r"torchinductor_[\w.-]+|[/\\]\.triton[/\\]|triton[/\\]cache|\bTORCHINDUCTOR_CACHE_DIR\b|"
        r"\bTRITON_CACHE_DIR\b|inductor[_-]cache|torch_compile_cache|[/\\]fxgraph[/\\]|[/\\]aotautograd[/\\]|"
        # the cache root itself, denied ($HOME unset or read-only in a container: '/.cache')
        r"[/\\]\.cache'"
    ),
    # a Triton kernel: a user's, or one Inductor generated
    "triton-kernel": (
        r"@triton\.jit|\btriton\.jit\b|\btl\.constexpr\b|\btriton_(?:poi|red|per|tem)_\w+|"
        r"triton[/\\](?:compiler|runtime|backends)[/\\]|\btriton\.(?:compiler|runtime)\b|triton_heuristics"
    ),
    # Inductor's or Dynamo's own frames, names and messages
    "inductor": (
        r"torch[/\\._]+_inductor\b|\btorchinductor\b|\bInductorError\b|\bCppCompileError\b|"
        r"BackendCompilerFailed|backend='inductor'|\basync_compile\b|\bcompile_worker\b|\bInductor\b"
    ),
    "dynamo": r"torch[/\\._]+_dynamo\b|\btorch\.compile\b|\btorchdynamo\b|\btorch\._dynamo\b",
    # torch in the paths, or a torch the log states
    "torch": (
        r"(?:site|dist)-packages[/\\]torch[/\\]|\btorch[/\\](?:_\w+|nn|cuda|utils|lib|include|csrc)[/\\]|"
        r"\bimport torch\b|\b(?:Py)?Torch version\b|\btorch==\d|"
        r"\btorch\.(?:cuda|compile|nn|utils|version|ops)\b|"
        r"\blibtorch\w*\.so|\btorch-\d+\.\d+|"
        # ATen's and c10's own symbols, mangled or not
        r"\bat::\w|_ZN\w*2at\d|\bc10::|_ZN\w*3c10\d"
    ),
    "triton": r"\btriton[/\\.]|\bimport triton\b|\btriton==\d|\bpytorch-triton\b|\btriton \d+\.\d+",
    "xla": r"\btorch_xla\b|\bPJRT_DEVICE\b|\blibtpu\b|\bXLA\b",
}
#: The signature's own words name the subject (a function of torch's own, say): nothing else is needed.
SELF = "self"
#: A weak match's subject when its signature names none: the compile stack itself.
DEFAULT_SUBJECT: Tuple[str, ...] = ("compile-cache", "triton-kernel", "inductor", "dynamo", "torch")
#: Said of a weak match whose subject the log never shows.
SUBJECT_SAYS = {
    "compile-cache": "a compile cache's path",
    "triton-kernel": "a Triton kernel",
    "inductor": "Inductor's frames",
    "dynamo": "Dynamo's frames",
    "torch": "torch in its paths",
    "triton": "Triton",
    "xla": "torch_xla",
}

#: A predicate of the log: (regex, flags), or (word, -1) for a plain word.
Predicate = Tuple[str, int]
WORD = -1


def subject_patterns(sig: Signature) -> List[Predicate]:
    """The log-wide patterns any one of which ties a weak match of `sig` to its issue's subject."""
    names = sig.subject or DEFAULT_SUBJECT
    return [(SUBJECTS.get(name, name), re.IGNORECASE) for name in names if name != SELF]


def predicates(signatures: Iterable[Signature]) -> Set[Predicate]:
    """Every log-wide question judging these signatures will ask, for the stream to answer."""
    out: Set[Predicate] = set()
    for sig in signatures:
        out.update((w, WORD) for w in sig.log_context)
        if sig.anchor and sig.anchor_lines is None:
            out.add((sig.anchor, sig.flags))
        if sig.against:
            out.add((sig.against, sig.flags))
        out.update(subject_patterns(sig))
    return out


@dataclass
class Sighting:
    line: int
    text: List[str] = field(default_factory=list)


#: Returned by `LogContext.judge` for a match that does not count at all.
DROP = "drop"
#: Returned by `LogContext.judge` for a match the log alone cannot decide, but this machine can
#: (`Signature.decided_by`).
POSSIBLE = "possible"


class LogContext:
    """One log's answers to its log-wide questions, gathered as it streamed by."""

    def __init__(self, seen: Mapping[Predicate, Sighting]) -> None:
        self.seen = dict(seen)

    def has(self, pattern: str, flags: int) -> bool:
        return (pattern, flags) in self.seen

    def judge(self, sig: Signature, near: Optional[bool], line: int) -> Tuple[str, Optional[str]]:
        """("exact", None), ("partial", why), (POSSIBLE, why) or (DROP, why) for one match of `sig`
        at `line`.

        `near` is whether a line-scoped anchor was within `anchor_lines` lines of the match.
        """
        if sig.against and self.has(sig.against, sig.flags):
            says = sig.against_says or "the log points at another cause"
            return DROP, f"line {line} has its error, but {says}"
        why = self._why_partial(sig, near, line)
        if why is None:
            return "exact", None
        if not self.subject_seen(sig):
            if sig.decided_by:
                return POSSIBLE, f"line {line} has its error, with nothing around it that tells its cause"
            return DROP, f"line {line}: nothing else in the log ties it to {self._subject_says(sig)}"
        return "partial", why

    def subject_seen(self, sig: Signature) -> bool:
        if SELF in sig.subject:
            return True
        return any(self.has(p, f) for p, f in subject_patterns(sig))

    def subject_line(self, sig: Signature) -> Optional[Sighting]:
        """Where the log first showed the weak match's subject."""
        lines = [self.seen[key] for key in subject_patterns(sig) if key in self.seen]
        return min(lines, key=lambda s: s.line) if lines else None

    @staticmethod
    def _subject_says(sig: Signature) -> str:
        names = sig.subject or DEFAULT_SUBJECT
        return " or ".join(SUBJECT_SAYS.get(n, n) for n in names)

    def _why_partial(self, sig: Signature, near: Optional[bool], line: int) -> Optional[str]:
        if sig.strength != "exact":
            return f"line {line} shows a symptom other causes share too"
        if sig.log_context and not any(self.has(w, WORD) for w in sig.log_context):
            return f"line {line} has its error, but the log never mentions {' or '.join(sig.log_context)}"
        if sig.anchor:
            if sig.anchor_lines is None:
                found, where = self.has(sig.anchor, sig.flags), "the log does not"
            else:
                found, where = bool(near), "the lines around it do not"
            if not found:
                shows = sig.anchor_says or "the context of this issue"
                return f"line {line} has its error, but {where} show {shows}"
        return None


def near_found(data: bytes, span: Tuple[int, int], sig: Signature) -> bool:
    """Whether `sig.anchor` is within `sig.anchor_lines` lines of the match at `span`."""
    return _found(sig.anchor, sig.flags, _near(data, span, sig.anchor_lines))


def _near(data: bytes, span: Tuple[int, int], lines: Optional[int]) -> bytes:
    """The match's own lines and `lines` lines either side (the whole log when None)."""
    if lines is None:
        return data
    a, b = span
    floor, ceiling = max(0, a - MAX_NEAR_BYTES), min(len(data), b + MAX_NEAR_BYTES)
    start = a
    for _ in range(lines + 1):
        nl = data.rfind(b"\n", floor, start)
        start = floor if nl < 0 else nl
        if nl < 0:
            break
    end = b
    for _ in range(lines + 1):
        nl = data.find(b"\n", end, ceiling)
        if nl < 0:
            end = ceiling
            break
        end = nl + 1
    return data[start:end]


def _found(pattern: str, flags: int, text: bytes) -> bool:
    try:
        return re.search(pattern.encode(), text, flags & ~re.UNICODE) is not None
    except (re.error, ValueError, UnicodeEncodeError):  # a pattern that only works on text
        return re.search(pattern, text.decode("utf-8", errors="replace"), flags) is not None
