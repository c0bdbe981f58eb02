"""Finding known-issue signatures in a log of any size, in linear time.

Users paste whatever they have: a 50 MB CI log with ANSI colours and Windows line endings, a
traceback wrapped three times by Dynamo, a mangled symbol. The signatures are the issues' own
(`KnownIssue.signatures`, the ones canaries are classified with), so they are written for
correctness, not for speed; running forty of them over 50 MB would take minutes. Instead:

* every signature's regex is parsed once to find a literal it cannot match without (the
  longest one, or one per branch of a top-level alternation), and the log is searched for
  that literal with `str.find` on a lower-cased copy, which runs at memchr speed;
* the regex then runs only on a bounded window around each literal hit (a few KB either
  side, overlapping windows merged), so a 10 MB single-line log costs what a short one does;
* a signature with no usable literal is searched line by line, each line capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from inductor_doctor.model import KnownIssue, Signature

try:  # the regex parser moved in 3.11; both spellings are the stdlib's own
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re import _constants as _sre_c  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

#: Characters either side of a literal hit in which the full regex may match: room for a
#: multi-line signature (some 40 traceback lines), while one huge line costs no more than a
#: short one.
WINDOW_CHARS = 4096
#: Lines longer than this are cut when scanned without a literal, and when shown as evidence.
MAX_LINE = 4096
SHOWN_LINE = 240
#: Evidence kept per signature, and occurrences counted before we stop counting.
MAX_EVIDENCE = 3
MAX_COUNT = 1000
MIN_LITERAL = 3

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def normalize(text: str) -> Tuple[str, bool]:
    """Strip ANSI escapes (once, over the whole text) and turn CRLF/CR into LF."""
    stripped = False
    if "\x1b" in text:
        text = _ANSI.sub("", text)
        stripped = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, stripped


def lowered(text: str) -> str:
    """A lower-cased copy whose offsets are the original's (some non-ASCII letters grow)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return re.sub(r"[^\x00-\x7f]", "\x00", text).lower()


# --- literal extraction ------------------------------------------------------------------------


def required_literals(pattern: str, flags: int = 0) -> Optional[List[str]]:
    """Lower-cased literals one of which every match must contain; None when there is none.

    A top-level alternation yields one literal per branch (any of them will do); groups,
    repeats with a minimum of one and nested alternations contribute what they require.
    """
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except re.error:
        return None
    best = _best(list(parsed))
    if not best or min(len(s) for s in best) < MIN_LITERAL:
        return None
    return sorted({s.lower() for s in best})


def _best(items: Sequence[Tuple[object, object]]) -> Optional[List[str]]:
    """The most selective requirement of a sequence: a literal run, or any-of literals."""
    candidates: List[List[str]] = []
    run: List[str] = []

    def flush() -> None:
        if run:
            candidates.append(["".join(run)])
            run.clear()

    for op, av in items:
        if op is _sre_c.LITERAL:
            run.append(chr(av))  # type: ignore[arg-type]
            continue
        if op is _sre_c.SUBPATTERN:
            inner = list(av[-1])  # type: ignore[index]
            literal = _pure_literal(inner)
            if literal is not None:
                run.append(literal)
                continue
            flush()
            sub = _best(inner)
            if sub:
                candidates.append(sub)
            continue
        flush()
        if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT):
            low, _high, inner = av  # type: ignore[misc]
            if low >= 1:
                sub = _best(list(inner))
                if sub:
                    candidates.append(sub)
        elif op is _sre_c.BRANCH:
            alternatives = [_best(list(branch)) for branch in av[1]]  # type: ignore[index]
            if all(alternatives):
                candidates.append([s for alt in alternatives for s in alt])  # type: ignore[union-attr]
        # AT, IN, ANY, CATEGORY, GROUPREF, ASSERT...: required but not literal
    flush()
    if not candidates:
        return None
    return max(candidates, key=lambda c: (min(len(s) for s in c), -len(c)))


def _pure_literal(items: Sequence[Tuple[object, object]]) -> Optional[str]:
    out = []
    for op, av in items:
        if op is not _sre_c.LITERAL:
            return None
        out.append(chr(av))  # type: ignore[arg-type]
    return "".join(out)


# --- scanning ----------------------------------------------------------------------------------


@dataclass
class SignatureHit:
    """Where one signature matched: offsets into the normalized text (line numbers come later)."""

    issue_id: str
    signature: Signature
    spans: List[Tuple[int, int]] = field(default_factory=list)  # the first MAX_EVIDENCE matches
    count: int = 0


@dataclass(frozen=True)
class _Probe:
    issue_id: str
    signature: Signature
    regex: re.Pattern[str]
    literals: Optional[Tuple[str, ...]]


def compile_probes(issues: Iterable[KnownIssue]) -> List[_Probe]:
    probes = []
    for issue in issues:
        for sig in issue.signatures:
            try:
                regex = sig.compiled()
            except re.error:  # a plugin's broken pattern must not stop triage
                continue
            lits = required_literals(sig.pattern, sig.flags)
            probes.append(_Probe(issue.id, sig, regex, tuple(lits) if lits else None))
    return probes


def scan(text: str, low: str, probes: Sequence[_Probe]) -> List[SignatureHit]:
    """Every probe over the text; only the signatures that matched come back."""
    hits = []
    for probe in probes:
        hit = _scan_literal(text, low, probe) if probe.literals else _scan_lines(text, probe)
        if hit.count:
            hits.append(hit)
    return hits


def _regions(low: str, literals: Sequence[str]) -> List[Tuple[int, int]]:
    """Disjoint spans of the text, each within WINDOW_CHARS of a literal hit.

    Hits are sampled at most every WINDOW_CHARS/2 characters: any occurrence skipped lies within
    half a window of a sampled one, so its own window is inside the sampled one's. A literal that
    is everywhere therefore costs one pass of the regex over the text, never one per hit.
    """
    n = len(low)
    step = WINDOW_CHARS // 2
    hits = []
    for lit in literals:
        pos = low.find(lit)
        while pos >= 0:
            hits.append((pos, pos + len(lit)))
            pos = low.find(lit, pos + max(step, len(lit)))
    hits.sort()
    regions: List[Tuple[int, int]] = []
    for a, b in hits:
        lo, hi = max(0, a - WINDOW_CHARS), min(n, b + WINDOW_CHARS)
        if regions and lo <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
        else:
            regions.append((lo, hi))
    return regions


def _scan_literal(text: str, low: str, probe: _Probe) -> SignatureHit:
    hit = SignatureHit(probe.issue_id, probe.signature)
    for lo, hi in _regions(low, probe.literals or ()):
        for m in probe.regex.finditer(text, lo, hi):
            if m.end() == m.start():
                continue
            hit.count += 1
            if len(hit.spans) < MAX_EVIDENCE:
                hit.spans.append((m.start(), m.end()))
            if hit.count >= MAX_COUNT:
                return hit
    return hit


def _scan_lines(text: str, probe: _Probe) -> SignatureHit:
    hit = SignatureHit(probe.issue_id, probe.signature)
    offset = 0
    for line in text.split("\n"):
        m = probe.regex.search(line[:MAX_LINE])
        if m is not None:
            hit.count += 1
            if len(hit.spans) < MAX_EVIDENCE:
                hit.spans.append((offset + m.start(), offset + m.end()))
            if hit.count >= MAX_COUNT:
                break
        offset += len(line) + 1
    return hit


# --- evidence ----------------------------------------------------------------------------------


def line_numbers(text: str, offsets: Iterable[int]) -> Dict[int, int]:
    """1-based line numbers of many offsets in one pass over the text."""
    out: Dict[int, int] = {}
    line, last = 1, 0
    for off in sorted(set(offsets)):
        line += text.count("\n", last, off)
        last = off
        out[off] = line
    return out


def evidence_lines(text: str, start: int, end: int, max_lines: int = 3) -> List[str]:
    """The lines a match spans, each cut to a readable width around the match."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    out = []
    pos = line_start
    for raw in text[line_start:line_end].split("\n")[:max_lines]:
        a = max(start - pos, 0)
        out.append(_cut(raw, a))
        pos += len(raw) + 1
    return out


def _cut(line: str, focus: int) -> str:
    line = line.rstrip()
    if len(line) <= SHOWN_LINE:
        return line
    lo = max(0, min(focus - SHOWN_LINE // 4, len(line) - SHOWN_LINE))
    return ("…" if lo else "") + line[lo : lo + SHOWN_LINE] + ("…" if lo + SHOWN_LINE < len(line) else "")


# --- versions mentioned in the log -------------------------------------------------------------

_VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.?dev|\.?post)\d+)*(?:\+[0-9a-z.]+)?)"
_MENTIONS = {
    "torch": re.compile(r"torch(?:\s+version)?(?:\s*(?:==|:|=)\s*|\s+|-)" + _VERSION),
    "torch-xla": re.compile(r"torch[_-]xla(?:\s+version)?(?:\s*(?:==|:|=)\s*|\s+|-)" + _VERSION),
    "triton": re.compile(r"triton(?:\s+version)?(?:\s*(?:==|:|=)\s*|\s+|-)" + _VERSION),
}


def versions_mentioned(low: str, limit: int = 5) -> Dict[str, List[str]]:
    """`torch==2.5.1`, `PyTorch version: 2.5.1+cu124`, `torch_xla 2.5.1`, `triton-3.1.0...`.

    Searched on the lower-cased text; a name glued to a longer word (`libtorch-2.5`) does not
    count, except `pytorch`.
    """
    found: Dict[str, List[str]] = {}
    for name, regex in _MENTIONS.items():
        seen: List[str] = []
        for m in regex.finditer(low):
            before = low[max(0, m.start() - 2) : m.start()]
            if before[-1:].isalnum() or before[-1:] == "_":
                if before != "py":
                    continue
            v = m.group(1).lstrip("v")
            if v not in seen:
                seen.append(v)
                if len(seen) >= limit:
                    break
        if seen:
            found[name] = seen
    return found
