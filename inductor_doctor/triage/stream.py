r"""Reading a log of any size once, in blocks, in bounded memory.

A training run's log is gigabytes, and the error that matters is often its last line. Triage
reads it as a stream of blocks (`BLOCK` bytes each, cut at nothing in particular), keeps
`CONTEXT` bytes either side of the part of a block it owns, and remembers only what it will show
or weigh: each signature's first matches (their lines, already decoded), whether each log-wide
piece of context was seen (and its first line), the versions the log states, and the line count.
Memory is a few blocks whatever the size of the log.

Speed: a signature's regex never runs over the whole log. Each signature has literals it cannot
match without (`scan.required_literals`), and the log is searched for all of them at once by one
regex over the ASCII-lower-cased block, so the log is read once however many issues there are.
Such a search costs little only where it can skip, so each literal is looked for from its rarest
byte on (the byte frequencies of the log's first block decide which is rare), and a hit is
checked against the whole literal. A literal that turns out to be everywhere (a path in every
line) leaves that search and is found with `bytes.find` instead, a few hits per window
(`scan._positions`). The signature's regex then runs only around the hits, as before.
"""

from __future__ import annotations

import bisect
import codecs
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import (
    IO,
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from inductor_doctor.core.model import KnownIssue, UsageError, lines_before
from inductor_doctor.triage.context import near_found
from inductor_doctor.triage.ending import TAIL_BYTES, Closure, Ending, closure, read_ending
from inductor_doctor.triage.scan import (
    _ANSI,
    MAX_COUNT,
    MAX_EVIDENCE,
    MAX_LINE,
    WINDOW_CHARS,
    _Probe,
    _raw_finditer,
    compile_probes,
    evidence_lines,
    required_literals,
)
from inductor_doctor.triage.versions import versions_mentioned

#: Bytes read at a time.
BLOCK = 8 * 1024 * 1024
#: Bytes kept either side of the part of a block that is searched: room for a multi-line
#: signature around its literal (`WINDOW_CHARS`), and for the lines an anchor is looked for in
#: (`context.MAX_NEAR_BYTES`).
CONTEXT = 128 * 1024
#: Judged for binary data before the rest is read.
SNIFF_BYTES = 65536
#: A pipe (or a generator of lines) still sending after this much is not a log (`yes`, a runaway
#: job): it is read this far and the result says so. A regular file is read to its end.
MAX_STREAM_BYTES = 16 * 1024 * 1024 * 1024
#: Hits of one literal in one block beyond which it is found with `bytes.find` instead.
DENSE_HITS = 1024
#: The shortest piece of a literal the combined search looks for.
MIN_PIECE = 4
#: Bytes of the first block whose byte frequencies decide which bytes are rare.
SAMPLE = 256 * 1024

Source = Union[IO[bytes], Iterable[Union[bytes, str]]]


# --- reading -----------------------------------------------------------------------------------


@dataclass
class LogStats:
    """What the reader learnt about the log besides its text."""

    source: str
    size: int = 0  # bytes read
    lines: int = 0
    truncated: bool = False
    ansi_stripped: bool = False
    encoding: str = "utf-8"


def check_first_block(data: bytes, shown: str) -> str:
    """The encoding of a log from its first block; binary data and gzip are a UsageError."""
    if data[:2] == b"\x1f\x8b":
        raise UsageError(
            f"{shown}: is gzip-compressed — decompress it: zcat FILE | inductor-doctor explain --log -"
        )
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # PowerShell's `>` writes UTF-16 with a BOM
        return "utf-16"
    sample = data[:SNIFF_BYTES]
    nuls = sample.count(b"\x00")
    if nuls:
        odd = sample[1::2].count(b"\x00")
        if nuls > len(sample) // 4 and odd > nuls * 0.9:  # UTF-16-LE without a BOM
            return "utf-16-le"
        raise UsageError(
            f"{shown}: binary data, not a text log (NUL byte at offset {sample.index(0)}) — "
            "pass the error output as text"
        )
    controls = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13, 27, 8))
    if sample and controls > len(sample) // 10:
        raise UsageError(f"{shown}: binary data, not a text log — pass the error output as text")
    return "utf-8"


def _raw_chunks(source: Source, cap: Optional[int]) -> Iterator[bytes]:
    """The source's bytes in pieces of about BLOCK (a file object, or an iterable of lines)."""
    read = getattr(source, "read", None)
    if read is not None:
        seen = 0
        while cap is None or seen < cap:
            want = BLOCK if cap is None else min(BLOCK, cap - seen)
            chunk = read(want)
            if not chunk:
                return
            if isinstance(chunk, str):
                chunk = chunk.encode("utf-8", errors="replace")
            seen += len(chunk)
            yield chunk
        return
    parts: List[bytes] = []
    size = seen = 0
    for line in source:  # type: ignore[union-attr]
        piece = line.encode("utf-8", errors="replace") if isinstance(line, str) else bytes(line)
        parts.append(piece)
        size += len(piece)
        seen += len(piece)
        if size >= BLOCK:
            yield b"".join(parts)
            parts, size = [], 0
        if cap is not None and seen >= cap:
            break
    if parts:
        yield b"".join(parts)


def _is_regular(source: Any) -> bool:
    try:
        return stat.S_ISREG(os.fstat(source.fileno()).st_mode)
    except (OSError, AttributeError, ValueError, TypeError):
        return False


def blocks(source: Source, stats: LogStats) -> Iterator[bytes]:
    """The log as UTF-8 blocks, ANSI escapes stripped; the first block is judged before the rest is read.

    An escape sequence cut by a block's end is held over to the next block, so it is stripped
    whole. `stats` is filled as the blocks go.
    """
    shown = "stdin" if stats.source == "-" else stats.source
    cap = None if _is_regular(source) else MAX_STREAM_BYTES
    decoder = None
    held = b""
    first = True
    last_raw = b""
    for raw in _raw_chunks(source, cap):
        stats.size += len(raw)
        last_raw = raw
        if first:
            stats.encoding = check_first_block(raw, shown)
            if stats.encoding != "utf-8":
                decoder = codecs.getincrementaldecoder(stats.encoding)(errors="replace")
        data = decoder.decode(raw).encode("utf-8") if decoder is not None else raw
        if first:
            if data[:3] == b"\xef\xbb\xbf":
                data = data[3:]
            first = False
        data = held + data
        cut = data.rfind(b"\x1b", max(0, len(data) - 256))
        held, data = (data[cut:], data[:cut]) if cut >= 0 else (b"", data)
        if b"\x1b" in data:
            data = _ANSI.sub(b"", data)
            stats.ansi_stripped = True
        if data:
            yield data
    if cap is not None and stats.size >= cap and last_raw:
        stats.truncated = True
    if decoder is not None:
        held += decoder.decode(b"", final=True).encode("utf-8")
    if held:
        if b"\x1b" in held:
            held = _ANSI.sub(b"", held)
            stats.ansi_stripped = True
        yield held


# --- the combined literal search ---------------------------------------------------------------


def _trie_pattern(words: Sequence[bytes]) -> bytes:
    """One regex for a set of literals, as a trie (`ab(?:c|d)`): the regex engine then tries few
    alternatives where one could start, and skips bytes no literal starts with."""
    root: Dict[Any, Any] = {}
    for w in words:
        node = root
        for c in w:
            node = node.setdefault(c, {})
        node[None] = True

    def emit(node: Dict[Any, Any]) -> bytes:
        children = sorted((k, v) for k, v in node.items() if k is not None)
        alts = [re.escape(bytes([c])) + emit(sub) for c, sub in children]
        if not alts:
            return b""
        body = alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"
        if None in node:
            return (b"(?:" + body + b")?") if len(alts) == 1 else body + b"?"
        return body

    return emit(root)


#: piece -> (literal, where in it the piece starts)
_Pieces = Dict[bytes, List[Tuple[bytes, int]]]


class LiteralSearch:
    """Where any of many lower-case literals occur in a lower-cased block, in a few passes.

    The literals are grouped by a byte each contains, and each group is one regex that starts
    with that byte (`b(?:ase::const_data_ptr<|...)`), which the regex engine finds at memchr-like
    speed and only then tries the rest: a pass per group, not per literal. The bytes are chosen
    to be few and rare (by the byte frequencies of the log's first block): a pass costs about
    the same whatever its byte, and a common byte only adds the stops. A hit is checked against
    the whole literal. A literal that turns out to be everywhere (a path on every line) is found
    on its own with `bytes.find` from then on, a few hits per window (`_sampled`).
    """

    def __init__(self) -> None:
        self.freq: Optional[Counter] = None
        self.sampled = 1
        self.dense: Set[bytes] = set()  # found alone from now on
        self._active: Optional[frozenset] = None
        self._groups: List[Tuple[re.Pattern, _Pieces, Dict[bytes, List[bytes]]]] = []
        self._alone: Set[bytes] = set()

    def _plan(self, literals: frozenset, low: bytes, lo: int) -> None:
        if self.freq is None:
            sample = low[lo : lo + SAMPLE]
            self.freq, self.sampled = Counter(sample), max(1, len(sample))
        if literals == self._active:
            return
        self._active = literals
        freq, n = self.freq, self.sampled
        alone = {lit for lit in literals if lit in self.dense}
        # Where each literal may be cut: a piece of at least MIN_PIECE bytes from there on.
        starts = {
            lit: {c: i for i, c in reversed(list(enumerate(lit[: max(1, len(lit) - MIN_PIECE + 1)])))}
            for lit in literals - alone
        }

        def cost(c: int) -> float:  # a pass, plus its stops
            return 1.0 + 40.0 * freq[c] / n

        chosen: Dict[int, List[bytes]] = {}
        todo = set(starts)
        while todo:
            covers: Dict[int, int] = {}
            for lit in todo:
                for c in starts[lit]:
                    covers[c] = covers.get(c, 0) + 1
            best = max(covers, key=lambda c: (covers[c] / cost(c), -freq[c], -c))
            group = [lit for lit in todo if best in starts[lit]]
            chosen[best] = group
            todo.difference_update(group)
        groups = []
        for c, lits in sorted(chosen.items()):
            pieces: Dict[bytes, List[Tuple[bytes, int]]] = {}
            for lit in lits:
                i = starts[lit][c]
                pieces.setdefault(lit[i:], []).append((lit, i))
            names = sorted(pieces)
            prefixes = {p: [q for q in names if p.startswith(q)] for p in names}
            groups.append((re.compile(_trie_pattern(names), re.DOTALL), pieces, prefixes))
        self._groups, self._alone = groups, alone

    def find(self, low: bytes, lo: int, hi: int, literals: Iterable[bytes]) -> Dict[bytes, List[int]]:
        """Literal -> where it starts in [lo, hi) (those found alone: a few per window)."""
        self._plan(frozenset(literals), low, lo)
        out: Dict[bytes, List[int]] = {}
        crowded: Set[bytes] = set()
        for regex, pieces, prefixes in self._groups:
            width = max(len(p) for p in pieces)
            end = min(len(low), hi + width)
            pos = lo
            stops: Dict[bytes, int] = {}
            while True:
                m = regex.search(low, pos, end)
                if m is None:
                    break
                p = m.start()
                hit = m.group()
                stops[hit] = stops.get(hit, 0) + 1
                if stops[hit] > DENSE_HITS:  # a piece everywhere, whole literal or not: its literals too
                    crowded.update(lit for lit, _ in pieces[hit])
                for piece in prefixes[hit]:
                    for lit, offset in pieces[piece]:
                        at = p - offset
                        if lo <= at < hi and low.startswith(lit, at):
                            found = out.setdefault(lit, [])
                            found.append(at)
                            if len(found) > DENSE_HITS:
                                crowded.add(lit)
                if crowded:
                    break
                pos = p + 1
            if crowded:  # a literal on every line: find it alone from here on
                self.dense |= crowded
                active = self._active or frozenset()
                self._active = None
                for lit in crowded:
                    out.pop(lit, None)
                self._plan(active, low, lo)
                return self._finish(low, lo, hi, out, redo=True)
        return self._finish(low, lo, hi, out)

    def _finish(
        self, low: bytes, lo: int, hi: int, out: Dict[bytes, List[int]], redo: bool = False
    ) -> Dict[bytes, List[int]]:
        if redo:  # the groups changed: search the block again with the new ones
            return self.find(low, lo, hi, self._active or frozenset())
        for lit in self._alone:
            found = _sampled(low, lit, lo, hi)
            if found:
                out[lit] = found
        return out


def _sampled(low: bytes, lit: bytes, lo: int, hi: int) -> List[int]:
    """Where `lit` starts in [lo, hi), at most one every WINDOW_CHARS/2 (see `scan._regions`)."""
    step = max(WINDOW_CHARS // 2, len(lit))
    out = []
    pos = low.find(lit, lo, hi + len(lit))
    while 0 <= pos < hi:
        out.append(pos)
        pos = low.find(lit, pos + step, hi + len(lit))
    return out


# --- what the scan keeps -----------------------------------------------------------------------


@dataclass
class Found:
    """One match of a signature, with what is needed to judge and show it later."""

    line: int
    text: List[str]
    near: Optional[bool] = None  # the anchor within `anchor_lines` lines (None: not asked)
    #: What the lines around it say: a warning, an error shown handled, inside a traceback.
    closure: Closure = field(default_factory=Closure)


@dataclass
class ProbeHits:
    probe: _Probe
    found: List[Found] = field(default_factory=list)
    count: int = 0
    last: int = 0  # the line of its last match (the last one counted, at MAX_COUNT)

    @property
    def saturated(self) -> bool:
        """Counted to MAX_COUNT and no further: where its last match is, is not known."""
        return self.count >= MAX_COUNT


@dataclass
class Seen:
    """A log-wide piece of context, and where it was first seen."""

    line: int
    text: List[str]


@dataclass
class Predicate:
    """A regex (or a plain word) asked of the whole log: is it anywhere?"""

    pattern: str
    flags: int
    regex: re.Pattern
    literals: Optional[Tuple[bytes, ...]]
    text_mode: bool = False


def _predicate(pattern: str, flags: int, word: bool = False) -> Optional[Predicate]:
    if word:
        lit = pattern.lower().encode("utf-8", errors="replace")
        regex = re.compile(re.escape(lit), re.IGNORECASE)
        return Predicate(pattern, flags, regex, (lit,) if len(lit) >= 3 else None)
    try:
        regex = re.compile(pattern.encode(), flags & ~re.UNICODE)
        text_mode = False
    except (re.error, ValueError, UnicodeEncodeError):
        try:
            regex, text_mode = re.compile(pattern, flags), True
        except re.error:
            return None
    lits = required_literals(pattern, flags)
    encoded = tuple(lit.encode("utf-8", errors="replace") for lit in lits) if lits else None
    return Predicate(pattern, flags, regex, encoded, text_mode)


# --- the scan ----------------------------------------------------------------------------------


@dataclass
class ScanResult:
    hits: List[ProbeHits]
    seen: Dict[Tuple[str, int], Seen]  # predicate key -> its first sighting
    versions: Dict[str, List[str]]
    stats: LogStats
    #: The failure the log ends in (`triage/ending.py`), or None when it ends in none.
    ending: Optional[Ending] = None


class StreamScan:
    """Every signature and every log-wide question over a stream of blocks, each block once.

    `predicates` are the log-wide questions the judgement will ask ((pattern, flags), or
    (word, -1) for a plain word): each is answered the first time it is seen, then no longer looked for.
    """

    def __init__(self, issues: Sequence[KnownIssue], predicates: Iterable[Tuple[str, int]] = ()) -> None:
        self.probes = compile_probes(issues)
        self.hits = [ProbeHits(p) for p in self.probes]
        self.predicates: Dict[Tuple[str, int], Predicate] = {}
        for pattern, flags in predicates:
            pred = _predicate(pattern, re.IGNORECASE if flags == -1 else flags, word=flags == -1)
            if pred is not None:
                self.predicates[(pattern, flags)] = pred
        self.seen: Dict[Tuple[str, int], Seen] = {}
        self.versions: Dict[str, List[str]] = {}
        self.literals = {lit for p in self.probes for lit in p.literals or ()}
        self.search = LiteralSearch()

    def feed(self, buf: bytes, lo: int, hi: int, line_at_lo: int) -> None:
        """Scan buf[lo:hi] (matches that start there), with buf[:lo] and buf[hi:] as context."""
        low = buf.lower()
        # A match that starts before `hi` may have its literal up to a window after it.
        wanted = set(self.literals)
        wanted.update(lit for p in self.predicates.values() for lit in p.literals or ())
        positions = self.search.find(low, lo, min(len(buf), hi + WINDOW_CHARS), wanted)
        counter = _LineCounter(buf, lo, line_at_lo)
        for ph in self.hits:
            if ph.count >= MAX_COUNT:
                continue
            probe = ph.probe
            if probe.literals is None:
                self._by_line(ph, buf, lo, hi, counter)
                continue
            starts = sorted(pos for lit in probe.literals for pos in positions.get(lit, ()))
            if not starts:
                continue
            for wlo, whi in _windows(starts, len(buf), max(len(x) for x in probe.literals)):
                for a, b in _raw_finditer(probe, buf, wlo, whi):
                    if not (lo <= a < hi) or b <= a:
                        continue
                    if probe.signature.unless and _excluded(probe, buf, a):
                        continue
                    if not self._record(ph, buf, a, b, counter):
                        break
                if ph.count >= MAX_COUNT:
                    break
        for key, pred in list(self.predicates.items()):
            where = self._first(pred, buf, low, lo, hi, positions)
            if where is not None:
                a, b = where
                self.seen[key] = Seen(counter.line(a), evidence_lines(buf, a, b, max_lines=2))
                del self.predicates[key]
        self._versions(low, lo, hi)

    def _record(self, ph: ProbeHits, buf: bytes, a: int, b: int, counter: _LineCounter) -> bool:
        ph.count += 1
        ph.last = counter.line(a)
        if len(ph.found) < MAX_EVIDENCE:
            sig = ph.probe.signature
            near = None
            if sig.anchor and sig.anchor_lines is not None:
                near = near_found(buf, (a, b), sig)
            found = Found(ph.last, evidence_lines(buf, a, b), near, closure(buf, a, counter.line))
            ph.found.append(found)
        return ph.count < MAX_COUNT

    def _by_line(self, ph: ProbeHits, buf: bytes, lo: int, hi: int, counter: _LineCounter) -> None:
        """A signature with no literal: each line of buf[lo:hi], cut at MAX_LINE."""
        start = buf.rfind(b"\n", 0, lo) + 1 if lo else 0
        while start < hi:
            end = buf.find(b"\n", start)
            end = len(buf) if end < 0 else end
            stop = min(end, start + MAX_LINE)
            for a, b in _raw_finditer(ph.probe, buf, start, stop):
                if a < lo or b <= a:
                    continue
                if ph.probe.signature.unless and _excluded(ph.probe, buf, a):
                    continue
                if not self._record(ph, buf, a, b, counter):
                    return
                break
            start = end + 1

    def _first(
        self, pred: Predicate, buf: bytes, low: bytes, lo: int, hi: int, positions: Dict[bytes, List[int]]
    ) -> Optional[Tuple[int, int]]:
        """Where the predicate first matches with a start in [lo, hi), if it does."""
        if pred.literals is None:
            spans: Iterable[Tuple[int, int]] = [(max(0, lo - WINDOW_CHARS), min(len(buf), hi + WINDOW_CHARS))]
        else:
            starts = sorted(pos for lit in pred.literals for pos in positions.get(lit, ()))
            if not starts:
                return None
            spans = _windows(starts, len(buf), max(len(x) for x in pred.literals))
        for wlo, whi in spans:
            if pred.text_mode:
                text = buf[wlo:whi].decode("utf-8", errors="replace")
                m = pred.regex.search(text)
                if m:
                    a = wlo + len(text[: m.start()].encode("utf-8"))
                    b = wlo + len(text[: m.end()].encode("utf-8"))
                    if lo <= a < hi:
                        return a, b
                continue
            for m in pred.regex.finditer(buf, wlo, whi):
                if lo <= m.start() < hi:
                    return m.start(), m.end()
        return None

    def _versions(self, low: bytes, lo: int, hi: int) -> None:
        found = versions_mentioned(low, found=self.versions, lo=lo, hi=hi)
        self.versions = found


def _excluded(probe: _Probe, buf: bytes, a: int) -> bool:
    before = buf[lines_before(buf, a) : a].decode("utf-8", errors="replace")
    return probe.signature.excluded(before)


def _windows(starts: Sequence[int], n: int, width: int) -> List[Tuple[int, int]]:
    """Disjoint spans, each within WINDOW_CHARS of a literal's start (see `scan._regions`)."""
    regions: List[Tuple[int, int]] = []
    for a in starts:
        lo, hi = max(0, a - WINDOW_CHARS), min(n, a + width + WINDOW_CHARS)
        if regions and lo <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
        else:
            regions.append((lo, hi))
    return regions


class _LineCounter:
    """1-based line numbers of offsets into a block, each counted from the nearest one known."""

    def __init__(self, buf: bytes, lo: int, line_at_lo: int) -> None:
        self.buf = buf
        self._known: List[Tuple[int, int]] = [(lo, line_at_lo)]  # sorted (offset, line)

    def line(self, offset: int) -> int:
        i = bisect.bisect_right(self._known, (offset, 1 << 62)) - 1
        base, line = self._known[max(i, 0)]
        if offset < base:  # before the first offset known: counted back
            line -= self.buf.count(b"\n", offset, base)
        else:
            line += self.buf.count(b"\n", base, offset)
        bisect.insort(self._known, (offset, line))
        return line


def scan_stream(
    source: Source, name: str, issues: Sequence[KnownIssue], predicates: Iterable[Tuple[str, int]] = ()
) -> ScanResult:
    """Read `source` once, block by block, and scan it; memory stays a few blocks.

    Each block is searched from where the last one stopped to CONTEXT bytes before its end (the
    rest is searched with the next block, which starts CONTEXT bytes before that point), so every
    match is found once, with CONTEXT bytes of log either side of it.
    """
    stats = LogStats(name)
    scan = StreamScan(issues, predicates)
    buf = b""
    lo = 0  # where the unsearched part of buf starts
    line_at_lo = 1
    nonblank = False
    for block in blocks(source, stats):
        nonblank = nonblank or not block.isspace()
        buf = buf + block if buf else block
        hi = len(buf) - CONTEXT
        if hi <= lo:
            continue
        scan.feed(buf, lo, hi, line_at_lo)
        line_at_lo += buf.count(b"\n", lo, hi)
        keep = max(0, hi - CONTEXT)
        buf, lo = buf[keep:], hi - keep
    if buf and len(buf) > lo:
        scan.feed(buf, lo, len(buf), line_at_lo)
        line_at_lo += buf.count(b"\n", lo, len(buf))
    if not nonblank:
        shown = "stdin" if name == "-" else name
        raise UsageError(f"{shown}: empty — paste the error log or traceback (a file, or - for stdin)")
    stats.lines = line_at_lo - (1 if buf.endswith(b"\n") else 0)
    return ScanResult(scan.hits, scan.seen, scan.versions, stats, _ending(buf, line_at_lo))


def _ending(buf: bytes, last_line: int) -> Optional[Ending]:
    """The failure the log ends in, read from the end of the stream's last buffer (`last_line` is
    the number of its last line)."""
    tail = buf[-TAIL_BYTES:]
    if len(tail) < len(buf):  # from a whole line on
        tail = tail[tail.find(b"\n") + 1 :]
    return read_ending(tail, last_line - tail.count(b"\n"))
