"""Whether a signature's match in a user's log stands in the issue's own context.

An error line alone is not a diagnosis when other bugs print the same words: `NameError: name
's2' is not defined` is this issue's only when the kernel is a user's `@triton.jit` one,
`failed to map segment from shared object` only when the library is a compile cache's. A
signature says what that context leaves in a log (`Signature.anchor`, `log_context`) and what
gives another cause away (`against`); a match without the one, or with the other, is still worth
saying, but only as "this looks like", with the reason. A canary's output needs none of this:
there the canary is the context.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

from inductor_doctor.model import Signature
from inductor_doctor.triage.scan import WINDOW_CHARS, required_literals

#: How far a line-scoped anchor is looked for, at most, in bytes either side of the match: a
#: huge single-line log costs no more than a short one.
MAX_NEAR_BYTES = 64 * 1024


class LogContext:
    """One log's answers to "is this pattern in it?", each found once, at memchr speed.

    A log-wide anchor is a regex over the whole log, and a 50 MB CI log makes that seconds; the
    regex's required literals (`scan.required_literals`) are found with `bytes.find` first, and
    the regex runs only around them, as the signatures themselves do.
    """

    def __init__(self, data: bytes, low: bytes) -> None:
        self.data, self.low = data, low
        self._anywhere: Dict[Tuple[str, int], bool] = {}

    def why_partial(self, sig: Signature, span: Tuple[int, int], line: int) -> Optional[str]:
        """None when this match is the issue's own error in its context; else why it is only partial."""
        if sig.strength != "exact":
            return f"line {line} shows a symptom other causes share too"
        if sig.log_context and not any(w.lower().encode() in self.low for w in sig.log_context):
            return f"line {line} has its error, but the log never mentions {' or '.join(sig.log_context)}"
        if sig.anchor:
            if sig.anchor_lines is None:
                found, where = self.anywhere(sig.anchor, sig.flags), "the log does not"
            else:
                near = _near(self.data, span, sig.anchor_lines)
                found, where = _found(sig.anchor, sig.flags, near), "the lines around it do not"
            if not found:
                shows = sig.anchor_says or "the context of this issue"
                return f"line {line} has its error, but {where} show {shows}"
        if sig.against and self.anywhere(sig.against, sig.flags):
            return f"line {line} has its error, but {sig.against_says or 'the log points at another cause'}"
        return None

    def anywhere(self, pattern: str, flags: int) -> bool:
        key = (pattern, flags)
        if key not in self._anywhere:
            self._anywhere[key] = self._search(pattern, flags)
        return self._anywhere[key]

    def _search(self, pattern: str, flags: int) -> bool:
        literals = required_literals(pattern, flags) if flags & re.IGNORECASE else None
        if not literals:
            return _found(pattern, flags, self.data)
        for literal in literals:
            lit = literal.encode("utf-8", errors="replace")
            pos = self.low.find(lit)
            while pos >= 0:
                lo, hi = max(0, pos - WINDOW_CHARS), pos + len(lit) + WINDOW_CHARS
                if _found(pattern, flags, self.data[lo:hi]):
                    return True
                pos = self.low.find(lit, pos + WINDOW_CHARS)
        return False


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
