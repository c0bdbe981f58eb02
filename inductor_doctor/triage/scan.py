r"""Finding known-issue signatures in a log of any size, in linear time.

Users paste whatever they have: a 50 MB CI log with ANSI colours and Windows line endings, a
traceback wrapped three times by Dynamo, a mangled symbol. The signatures are the issues' own
(`KnownIssue.signatures`, the ones canaries are classified with), so they are written for
correctness, not for speed; running forty of them over 50 MB would take minutes. Instead:

* the log stays bytes (UTF-8) throughout: decoding, lower-casing and searching 50 MB of text
  that holds a single non-ASCII character (a progress bar's `█`) costs several times what the
  same work on bytes does. Only evidence lines are decoded;
* every signature's regex is parsed once to find a literal it cannot match without (the
  longest one, or one per branch of a top-level alternation), and the log is searched for
  that literal with `bytes.find` on an ASCII-lower-cased copy, which runs at memchr speed;
* the regex then runs only on a bounded window around each literal hit (a few KB either
  side, overlapping windows merged), so a 10 MB single-line log costs what a short one does;
* a signature with no usable literal is searched line by line, each line capped.

Signatures are compiled as bytes patterns from the same pattern text (so `\w`, `\d`, `\s` and
IGNORECASE are ASCII-only here, as log text essentially is); a pattern with a non-ASCII
character, or one that does not compile as bytes, is run as text on the decoded windows instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from inductor_doctor.core.model import KnownIssue, Signature, lines_before

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

_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def normalize(data: bytes) -> Tuple[bytes, bool]:
    """Strip ANSI escapes, once, over the whole log.

    Carriage returns stay: line numbers count LF only (what `grep -n` and `sed -n Np` use, so a
    CRLF log keeps its numbering and a progress bar redrawn with CR stays one line), patterns do
    not depend on them, and evidence lines are shown without them.
    """
    if b"\x1b" in data:
        return _ANSI.sub(b"", data), True
    return data, False


def lowered(data: bytes) -> bytes:
    """ASCII lower case: same length, so offsets into it are offsets into the log."""
    return data.lower()


def _ascii_lower(text: str) -> bytes:
    return "".join(c.lower() if c.isascii() else c for c in text).encode("utf-8")


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


#: At most this many spellings are made of a run with small alternations in it (`g(?:cc|\+\+)-`
#: is "gcc-" or "g++-"), so a pattern whose fixed parts are short still has literals to look for.
MAX_SPELLINGS = 16


def _best(items: Sequence[Tuple[object, object]]) -> Optional[List[str]]:
    """The most selective requirement of a sequence: a literal run, or any-of literals.

    A run goes on through a group of plain alternatives or a small character class, as the
    set of its spellings (at most MAX_SPELLINGS of them).
    """
    candidates: List[List[str]] = []
    runs: List[str] = [""]

    def flush() -> None:
        if runs != [""]:
            candidates.append(list(runs))
        runs[:] = [""]

    def extend(alternatives: Optional[List[str]]) -> bool:
        if not alternatives or len(runs) * len(alternatives) > MAX_SPELLINGS:
            return False
        runs[:] = [r + a for r in runs for a in alternatives]
        return True

    for op, av in items:
        if op is _sre_c.LITERAL:
            runs[:] = [r + chr(av) for r in runs]  # type: ignore[arg-type]
            continue
        if op is _sre_c.SUBPATTERN:
            inner = list(av[-1])  # type: ignore[index]
            if extend(_spellings(inner)):
                continue
            flush()
            sub = _best(inner)
            if sub:
                candidates.append(sub)
            continue
        if op is _sre_c.IN and extend(_class_chars(av)):  # type: ignore[arg-type]
            continue
        if op is _sre_c.BRANCH and extend(_branch_spellings(av)):
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


def _spellings(items: Sequence[Tuple[object, object]]) -> Optional[List[str]]:
    """The strings a group of plain literals and alternations of them can be (None: not that)."""
    out = [""]
    for op, av in items:
        if op is _sre_c.LITERAL:
            out = [o + chr(av) for o in out]  # type: ignore[arg-type]
        elif op is _sre_c.BRANCH:
            alts = _branch_spellings(av)
            if alts is None or len(out) * len(alts) > MAX_SPELLINGS:
                return None
            out = [o + a for o in out for a in alts]
        elif op is _sre_c.IN:
            chars = _class_chars(av)  # type: ignore[arg-type]
            if chars is None or len(out) * len(chars) > MAX_SPELLINGS:
                return None
            out = [o + c for o in out for c in chars]
        elif op is _sre_c.SUBPATTERN:
            inner = _spellings(list(av[-1]))  # type: ignore[index]
            if inner is None or len(out) * len(inner) > MAX_SPELLINGS:
                return None
            out = [o + i for o in out for i in inner]
        else:
            return None
    return out


def _branch_spellings(av: object) -> Optional[List[str]]:
    out: List[str] = []
    for branch in av[1]:  # type: ignore[index]
        sub = _spellings(list(branch))
        if sub is None or not all(sub):
            return None
        out.extend(sub)
    return out if len(out) <= MAX_SPELLINGS else None


def _class_chars(av: Sequence[Tuple[object, object]]) -> Optional[List[str]]:
    """The characters of a small class of plain characters and ranges (`[/\\]`, `[4-8]`)."""
    chars: List[str] = []
    for op, arg in av:
        if op is _sre_c.LITERAL:
            chars.append(chr(arg))  # type: ignore[arg-type]
        elif op is _sre_c.RANGE:
            a, b = arg  # type: ignore[misc]
            chars.extend(chr(c) for c in range(a, b + 1))
        else:
            return None
        if len(chars) > 8:
            return None
    return chars or None


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
    regex: re.Pattern  # bytes pattern, or str pattern when `text_mode`
    literals: Optional[Tuple[bytes, ...]]
    text_mode: bool = False


def compile_probes(issues: Iterable[KnownIssue]) -> List[_Probe]:
    probes = []
    for issue in issues:
        for sig in issue.signatures:
            try:
                sig.compiled()
            except re.error:  # a plugin's broken pattern must not stop triage
                continue
            # A non-ASCII character (GCC's ‘quotes’) is several bytes: in a class or under a
            # quantifier it would not mean the same as bytes, so such a pattern runs as text.
            text_mode = not sig.pattern.isascii()
            try:
                regex: re.Pattern = (
                    sig.compiled() if text_mode else re.compile(sig.pattern.encode(), sig.flags & ~re.UNICODE)
                )
            except (re.error, ValueError):
                regex, text_mode = sig.compiled(), True
            lits = required_literals(sig.pattern, sig.flags)
            encoded = tuple(_ascii_lower(lit) for lit in lits) if lits else None
            probes.append(_Probe(issue.id, sig, regex, encoded, text_mode))
    return probes


def scan(data: bytes, low: bytes, probes: Sequence[_Probe]) -> List[SignatureHit]:
    """Every probe over the log; only the signatures that matched come back.

    Each distinct literal costs one pass over the log (about 10 ms per 50 MB), so literals that
    several signatures share are searched once.
    """
    hits = []
    # A literal that contains a shorter one is found through it: one pass fewer, same windows.
    literals = sorted({lit for p in probes for lit in p.literals or ()}, key=len)
    stand_in = {lit: next((o for o in literals if len(o) < len(lit) and o in lit), lit) for lit in literals}
    keys = set(stand_in.values())
    present = _present(low, keys)
    found: Dict[bytes, List[int]] = {key: [] for key in keys - present}  # absent: no pass over the log
    for probe in probes:
        hit = _scan_literal(data, low, probe, found, stand_in) if probe.literals else _scan_lines(data, probe)
        if hit.count:
            hits.append(hit)
    return hits


def _present(low: bytes, literals: Set[bytes]) -> Set[bytes]:
    """The literals the log holds at all, each looked for in the log's distinct lines only.

    Long logs repeat themselves (progress bars, a warning every step, one traceback a thousand
    times), and a literal without a line break is in the log exactly when it is in one of its
    distinct lines: one pass over the log finds those, then each literal costs a pass over them
    instead of over the whole log. Only the few literals that are there get the full pass that
    finds where (`_positions`).
    """
    if len(literals) < 4 or len(low) < (1 << 20):
        return set(literals)  # small logs, or few literals: the full passes cost less than the dedup
    distinct = b"\n".join(dict.fromkeys(low.split(b"\n")))
    return {lit for lit in literals if (low if b"\n" in lit else distinct).find(lit) >= 0}


def _finditer(probe: _Probe, data: bytes, lo: int, hi: int) -> Iterable[Tuple[int, int]]:
    """Match spans as byte offsets, less those that `Signature.unless` gives to another bug."""
    for a, b in _raw_finditer(probe, data, lo, hi):
        if not _excluded(probe.signature, data, a):
            yield a, b


def _excluded(sig: Signature, data: bytes, a: int) -> bool:
    if not sig.unless:
        return False
    before = data[lines_before(data, a) : a].decode("utf-8", errors="replace")
    return sig.excluded(before)


def _raw_finditer(probe: _Probe, data: bytes, lo: int, hi: int) -> Iterable[Tuple[int, int]]:
    """Match spans as byte offsets, whether the pattern runs on bytes or on decoded text."""
    if not probe.text_mode:
        for m in probe.regex.finditer(data, lo, hi):
            yield m.start(), m.end()
        return
    window = data[lo:hi]
    text = window.decode("utf-8", errors="replace")
    for m in probe.regex.finditer(text):
        a = lo + len(text[: m.start()].encode("utf-8", errors="replace"))
        b = lo + len(text[: m.end()].encode("utf-8", errors="replace"))
        yield a, min(b, hi)


def _positions(low: bytes, lit: bytes) -> List[int]:
    """Where `lit` occurs, sampled at most every WINDOW_CHARS/2 bytes (see `_regions`)."""
    step = max(WINDOW_CHARS // 2, len(lit))
    out = []
    pos = low.find(lit)
    while pos >= 0:
        out.append(pos)
        pos = low.find(lit, pos + step)
    return out


def _regions(
    low: bytes, literals: Sequence[bytes], found: Dict[bytes, List[int]], stand_in: Dict[bytes, bytes]
) -> List[Tuple[int, int]]:
    """Disjoint spans of the log, each within WINDOW_CHARS of a literal hit.

    Hits are sampled at most every WINDOW_CHARS/2 bytes: any occurrence skipped lies within half a
    window of a sampled one, so its own window is inside the sampled one's. A literal that is
    everywhere therefore costs one pass of the regex over the log, never one per hit.
    """
    n = len(low)
    hits = []
    for lit in literals:
        key = stand_in.get(lit, lit)
        if key not in found:
            found[key] = _positions(low, key)
        hits.extend((pos, pos + len(lit)) for pos in found[key])
    hits.sort()
    regions: List[Tuple[int, int]] = []
    for a, b in hits:
        lo, hi = max(0, a - WINDOW_CHARS), min(n, b + WINDOW_CHARS)
        if regions and lo <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
        else:
            regions.append((lo, hi))
    return regions


def _record(hit: SignatureHit, a: int, b: int) -> bool:
    """Count one match; False once enough are counted."""
    hit.count += 1
    if len(hit.spans) < MAX_EVIDENCE:
        hit.spans.append((a, b))
    return hit.count < MAX_COUNT


def _scan_literal(
    data: bytes, low: bytes, probe: _Probe, found: Dict[bytes, List[int]], stand_in: Dict[bytes, bytes]
) -> SignatureHit:
    hit = SignatureHit(probe.issue_id, probe.signature)
    for lo, hi in _regions(low, probe.literals or (), found, stand_in):
        for a, b in _finditer(probe, data, lo, hi):
            if b > a and not _record(hit, a, b):
                return hit
    return hit


def _scan_lines(data: bytes, probe: _Probe) -> SignatureHit:
    hit = SignatureHit(probe.issue_id, probe.signature)
    offset = 0
    for line in data.split(b"\n"):
        for a, b in _raw_finditer(probe, line[:MAX_LINE], 0, min(len(line), MAX_LINE)):
            if _excluded(probe.signature, data, offset + a):
                continue
            if b > a and not _record(hit, offset + a, offset + b):
                return hit
            break
        offset += len(line) + 1
    return hit


# --- evidence ----------------------------------------------------------------------------------


def line_numbers(data: bytes, offsets: Iterable[int]) -> Dict[int, int]:
    """1-based line numbers of many offsets in one pass over the log."""
    out: Dict[int, int] = {}
    line, last = 1, 0
    for off in sorted(set(offsets)):
        line += data.count(b"\n", last, off)
        last = off
        out[off] = line
    return out


def evidence_lines(data: bytes, start: int, end: int, max_lines: int = 3) -> List[str]:
    """The lines a match spans, decoded, each cut to a readable width around the match."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    out = []
    pos = line_start
    for raw in data[line_start:line_end].split(b"\n")[:max_lines]:
        focus = max(start - pos, 0)
        redraw = raw.rfind(b"\r", 0, max(focus, 1))  # a progress bar redrawn before the match
        if redraw >= 0 and redraw < focus:
            pos += redraw + 1
            focus -= redraw + 1
            raw = raw[redraw + 1 :]
        lo = max(0, focus - SHOWN_LINE)
        piece = raw[lo : focus + 2 * SHOWN_LINE].decode("utf-8", errors="replace")
        out.append(_cut(piece, min(focus - lo, len(piece)), lo > 0, focus + 2 * SHOWN_LINE < len(raw)))
        pos += len(raw) + 1
    return out


def _cut(line: str, focus: int, cut_before: bool = False, cut_after: bool = False) -> str:
    line = line.rstrip()
    if len(line) > SHOWN_LINE:
        lo = max(0, min(focus - SHOWN_LINE // 4, len(line) - SHOWN_LINE))
        cut_before = cut_before or lo > 0
        cut_after = cut_after or lo + SHOWN_LINE < len(line)
        line = line[lo : lo + SHOWN_LINE]
    return ("…" if cut_before else "") + line + ("…" if cut_after else "")
