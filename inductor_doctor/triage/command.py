"""`explain --log`: which known issues a pasted error log matches, best first, with the evidence.

The user has a failure and a log, not a diagnosis. Triage reads the log (a file or stdin; any
size, colour codes, Windows line endings), looks for every known issue's signatures (the same
`KnownIssue.signatures` canaries are classified with, so there is one copy of each), and says how
sure it is in words: "this is X" only when an exact signature stands in the issue's own context
(`triage/context.py`) and the versions the log states fit the issue's range (`triage/versions.py`);
"this looks like X, because ..." otherwise; nothing when nothing points at a known issue. It then
offers the one command that confirms the diagnosis on this machine (`check --only <ids>`), and
runs it with `--check`.

Exit codes: 0 when a known issue matched, 1 when none did, 2 when the input is unusable (missing,
empty, binary). Nothing here imports torch; the confirming check runs its canaries in subprocesses.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.model import KnownIssue, Severity, UsageError
from inductor_doctor.triage.context import LogContext
from inductor_doctor.triage.scan import (
    SignatureHit,
    compile_probes,
    evidence_lines,
    line_numbers,
    lowered,
    normalize,
    scan,
)
from inductor_doctor.triage.versions import already_met, in_range, versions_mentioned

SCHEMA = "inductor-doctor/triage/v1"
#: Logs larger than this are read as their first and last halves: a traceback is near the end,
#: the environment dump near the start, and memory stays bounded.
MAX_BYTES = 512 * 1024 * 1024
#: A pipe that is still sending after this much is not a log (`yes`, /dev/urandom, a runaway job).
MAX_STREAM_BYTES = 4 * MAX_BYTES
#: Judged for binary data before the rest is read.
SNIFF_BYTES = 65536
FIND_SPEC_TIMEOUT_S = 30.0

EXACT, PARTIAL, VERSION_ONLY = "exact", "partial", "version-only"


@dataclass
class LogInput:
    """A log ready to scan: UTF-8 bytes (never decoded whole: see triage_scan), no ANSI, LF only."""

    source: str  # the path, or "-" for stdin
    data: bytes
    size: int  # bytes read
    truncated: bool = False
    ansi_stripped: bool = False
    encoding: str = "utf-8"

    @property
    def lines(self) -> int:
        return self.data.count(b"\n") + (0 if self.data.endswith(b"\n") else 1)


@dataclass
class Evidence:
    line: int
    text: List[str]
    signature: str
    strength: str

    def to_dict(self) -> Dict[str, Any]:
        return {"line": self.line, "text": self.text, "signature": self.signature, "strength": self.strength}


@dataclass
class IssueMatch:
    issue: KnownIssue
    confidence: str  # exact | partial | version-only
    score: int
    evidence: List[Evidence] = field(default_factory=list)
    occurrences: int = 0
    versions: Dict[str, List[str]] = field(default_factory=dict)  # the log's, for affected packages
    version_in_range: Optional[bool] = None
    note: Optional[str] = None
    because: List[str] = field(default_factory=list)  # why only partial, in the user's words
    #: Workarounds that do nothing for the versions the log states, and why (index -> reason).
    moot: Dict[int, str] = field(default_factory=dict)

    @property
    def assessment(self) -> str:
        """What a user reads first: "this is X" only for an anchored exact match."""
        if self.confidence == EXACT:
            return f"this is {self.issue.id}"
        if self.confidence == PARTIAL:
            return f"this looks like {self.issue.id}"
        return f"the versions fit {self.issue.id}"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "id": self.issue.id,
            "title": self.issue.title,
            "severity": self.issue.severity.value,
            "confidence": self.confidence,
            "assessment": self.assessment,
            "because": list(self.because),
            "score": self.score,
            "occurrences": self.occurrences,
            "evidence": [e.to_dict() for e in self.evidence],
            "versions": self.versions,
            "version_in_range": self.version_in_range,
            "note": self.note,
            "workarounds": self._workarounds(),
            "upstream": list(self.issue.upstream),
            "explain": f"inductor-doctor explain {self.issue.id}",
        }

    def _workarounds(self) -> List[Dict[str, Any]]:
        """The issue's workarounds, those the log's versions make moot last, each saying why."""
        out = []
        for index, w in enumerate(self.issue.workarounds):
            d = w.to_dict()
            d["moot"] = self.moot.get(index)
            out.append(d)
        return sorted(out, key=lambda d: d["moot"] is not None)


@dataclass
class TriageResult:
    """The `explain --log` document: the matches, best first, and the confirming check."""

    log: LogInput
    matches: List[IssueMatch]  # exact/partial, best first; or version-only hints when none
    versions: Dict[str, List[str]]
    duration_s: float = 0.0
    check: Dict[str, Any] = field(default_factory=dict)
    command: str = "triage"

    @property
    def matched(self) -> List[IssueMatch]:
        return [m for m in self.matches if m.confidence != VERSION_ONLY]

    def to_dict(self) -> Dict[str, Any]:
        return to_dict(self)


# --- reading -----------------------------------------------------------------------------------


def read_log(source: str) -> LogInput:
    """A path or `-`; anything unusable is a one-line UsageError (exit 2), never a traceback."""
    shown = "stdin" if source == "-" else source
    try:
        if source == "-":
            if sys.stdin.isatty():
                sys.stderr.write("inductor-doctor: paste the log, then Ctrl-D (Ctrl-Z Enter on Windows)\n")
            data, truncated = _read_stream(sys.stdin.buffer, shown)
        else:
            path = Path(source).expanduser()
            if path.is_dir():
                raise UsageError(f"{source}: is a directory — pass a log file, or - for stdin")
            with path.open("rb") as fh:
                data, truncated = _read_stream(fh, shown)
    except UsageError:
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{shown}: cannot read ({reason}) — check the path") from None
    size = len(data)
    data, encoding = _decode(data, shown)
    data, stripped = normalize(data)
    if not data.strip():
        raise UsageError(f"{shown}: empty — paste the error log or traceback (a file, or - for stdin)")
    return LogInput(source, data, size, truncated, stripped, encoding)


def _read_stream(stream: Any, shown: str) -> Tuple[bytes, bool]:
    """At most MAX_BYTES: a larger log keeps its first and last halves, in bounded time and memory.

    The first block is judged before anything else is read, so `/dev/zero` or a binary file is
    refused at once; a regular file is read head and tail by seeking; a pipe that never ends is
    given up after MAX_STREAM_BYTES, keeping its head and the last half-MAX_BYTES seen.
    """
    half = MAX_BYTES // 2
    first = stream.read(min(SNIFF_BYTES, MAX_BYTES))
    _decode(first, shown)
    if len(first) < SNIFF_BYTES:
        return first, False
    size = _regular_size(stream)
    if size is not None and size > MAX_BYTES:
        head = first + stream.read(half - len(first))
        stream.seek(size - half)
        return head + _SKIPPED + stream.read(half), True
    head = first + stream.read(MAX_BYTES - len(first))
    if len(head) < MAX_BYTES:
        return head, False
    tail, seen = b"", len(head)
    while seen < MAX_STREAM_BYTES:
        chunk = stream.read(min(half, MAX_STREAM_BYTES - seen))
        if not chunk:
            break
        seen += len(chunk)
        tail = (tail + chunk)[-half:]
    if not tail:
        return head, False
    return head[:half] + _SKIPPED + tail, True


_SKIPPED = b"\n[... middle of the log not read ...]\n"


def _regular_size(stream: Any) -> Optional[int]:
    try:
        st = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) and stream.seekable() else None


def _decode(data: bytes, shown: str) -> Tuple[bytes, str]:
    """UTF-8 bytes out (invalid sequences are kept: the scan does not care); binary refused."""
    if data[:2] == b"\x1f\x8b":
        raise UsageError(
            f"{shown}: is gzip-compressed — decompress it: zcat FILE | inductor-doctor explain --log -"
        )
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # PowerShell's `>` writes UTF-16 with a BOM
        return data.decode("utf-16", errors="replace").encode("utf-8"), "utf-16"
    sample = data[:65536]
    nuls = sample.count(b"\x00")
    if nuls:
        odd = sample[1::2].count(b"\x00")
        if nuls > len(sample) // 4 and odd > nuls * 0.9:  # UTF-16-LE without a BOM
            return data.decode("utf-16-le", errors="replace").encode("utf-8"), "utf-16-le"
        raise UsageError(
            f"{shown}: binary data, not a text log (NUL byte at offset {sample.index(0)}) — "
            "pass the error output as text"
        )
    controls = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13, 27, 8))
    if sample and controls > len(sample) // 10:
        raise UsageError(f"{shown}: binary data, not a text log — pass the error output as text")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data, "utf-8"


# --- matching ----------------------------------------------------------------------------------


def triage_text(log: LogInput, issues: Sequence[KnownIssue]) -> TriageResult:
    """Signatures first, judged in their context; the log's versions then confirm or demote.

    A partial match is a symptom several issues share, or an issue's error out of its context:
    when any issue matched exactly, partial-only matches of other issues are dropped; otherwise
    they are reported as "looks like", each with its reason.
    """
    start = time.perf_counter()
    data = log.data
    low = lowered(data)
    hits = scan(data, low, compile_probes(issues))
    versions = versions_mentioned(low)
    by_issue: Dict[str, List[SignatureHit]] = {}
    for h in hits:
        by_issue.setdefault(h.issue_id, []).append(h)
    numbers = line_numbers(data, [span[0] for h in hits for span in h.spans])
    issue_by_id = {i.id: i for i in issues}

    context = LogContext(data, low)
    matches = [
        _match(issue_by_id[issue_id], issue_hits, context, numbers, versions)
        for issue_id, issue_hits in by_issue.items()
    ]
    if any(m.confidence == EXACT for m in matches):
        matches = [m for m in matches if m.confidence == EXACT]
    if not matches:
        matches = _version_hints(issues, versions)
    matches.sort(key=lambda m: (-m.score, m.issue.severity is not Severity.ERROR, m.issue.id))
    return TriageResult(log, matches, versions, time.perf_counter() - start)


def _match(
    issue: KnownIssue,
    hits: List[SignatureHit],
    context: LogContext,
    numbers: Mapping[int, int],
    versions: Mapping[str, List[str]],
) -> IssueMatch:
    """One issue's evidence, exact only where a match stands in the issue's own context."""
    evidence: List[Evidence] = []
    reasons: List[str] = []
    ranged = True  # whether every exact match's wording is bounded by the issue's affected range
    for h in hits:
        for a, b in h.spans:
            why = context.why_partial(h.signature, (a, b), numbers[a])
            strength = "exact" if why is None else "partial"
            lines = evidence_lines(context.data, a, b)
            evidence.append(Evidence(numbers[a], lines, h.signature.pattern, strength))
            if why is None:
                ranged = ranged and h.signature.ranged
            elif h.signature.strength == "exact":
                reasons.append(why)
    exact = any(e.strength == "exact" for e in evidence)
    if not exact and not reasons:
        first = min(evidence, key=lambda e: e.line)
        reasons.append(f"line {first.line} shows a symptom other causes share too")
    evidence.sort(key=lambda e: (e.strength != "exact", e.line))
    match = IssueMatch(
        issue,
        EXACT if exact else PARTIAL,
        score=(100 if exact else 40) + 10 * (len(hits) - 1),
        evidence=_dedupe(evidence)[:5],
        occurrences=sum(h.count for h in hits),
        because=[] if exact else _dedupe_text(reasons)[:2],
    )
    _weigh_versions(match, versions, ranged)
    match.moot = {
        i: why for i, w in enumerate(issue.workarounds) if (why := already_met(w, versions)) is not None
    }
    return match


def _dedupe(evidence: List[Evidence]) -> List[Evidence]:
    seen, out = set(), []
    for e in evidence:
        if e.line not in seen:
            seen.add(e.line)
            out.append(e)
    return out


def _dedupe_text(texts: List[str]) -> List[str]:
    return list(dict.fromkeys(texts))


def _weigh_versions(match: IssueMatch, versions: Mapping[str, List[str]], ranged: bool = True) -> None:
    """In range: more sure. Outside it: the same words from another cause, so at most partial,
    unless the matching wording is the failure class on any release (`Signature.ranged`)."""
    verdict, seen, clauses = in_range(match.issue, versions)
    match.versions, match.version_in_range = seen, verdict
    if verdict is True:
        match.score += 15
        match.note = "; ".join(clauses)
    elif verdict is False:
        match.score -= 30
        if not ranged:
            match.note = "; ".join(clauses) + ": the same failure on another release pair"
            return
        match.note = "; ".join(clauses) + ": a similar error with another cause, or a regression"
        if match.confidence == EXACT:
            match.confidence = PARTIAL
            match.score -= 60
            outside = "; ".join(c for c in clauses if "outside" in c)
            match.because = [f"line {match.evidence[0].line} has its error, but {outside}"]
        else:
            match.because.append("; ".join(c for c in clauses if "outside" in c))


def _version_hints(issues: Sequence[KnownIssue], versions: Mapping[str, List[str]]) -> List[IssueMatch]:
    """No signature matched: the issues whose affected range covers every version mentioned."""
    if not versions:
        return []
    hints = []
    for issue in issues:
        if not issue.affected:
            continue
        verdict, seen, clauses = in_range(issue, versions)
        if verdict is True and len(seen) == len(issue.affected):
            hints.append(
                IssueMatch(
                    issue, VERSION_ONLY, 10, versions=seen, version_in_range=True, note="; ".join(clauses)
                )
            )
    return hints


# --- confirming on this machine ----------------------------------------------------------------


def check_command(ids: Sequence[str], python: Optional[str]) -> List[str]:
    cmd = ["inductor-doctor", "check", "--only", ",".join(ids)]
    if python:
        cmd += ["--python", python]
    return cmd


def torch_importable(interpreter: str) -> Tuple[bool, str]:
    """Whether torch can be found for the target interpreter, without importing it anywhere.

    For this interpreter `find_spec` answers in process (it locates the package, it runs none of
    it); another interpreter is asked in a subprocess.
    """
    if os.path.abspath(interpreter) == os.path.abspath(sys.executable):  # not realpath: venvs
        import importlib.util

        try:
            found = importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            found = False
        return (True, "") if found else (False, f"torch is not installed for {interpreter}")
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)"
    try:
        proc = subprocess.run(
            [interpreter, "-c", code], capture_output=True, timeout=FIND_SPEC_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"could not run {interpreter}: {type(exc).__name__}"
    if proc.returncode == 0:
        return True, ""
    return False, f"torch is not installed for {interpreter}"


def offer_check(result: TriageResult, python: Optional[str], run: bool) -> Dict[str, Any]:
    """The confirming `check --only` command, whether it can run here, and its verdicts if run."""
    ids = [m.issue.id for m in result.matched]
    block: Dict[str, Any] = {"command": None, "available": False, "ran": False, "reason": None}
    if not ids:
        block["reason"] = "no known issue matched"
        return block
    block["command"] = " ".join(check_command(ids, python))
    from inductor_doctor.probe.target import resolve_python

    interpreter = resolve_python(python)
    ok, why = torch_importable(interpreter)
    block["available"] = ok
    if not ok:
        block["reason"] = f"{why}: install it, then run the command to confirm"
        return block
    if not run:
        return block
    block.update(_run_check(ids, python))
    return block


def _run_check(ids: Sequence[str], python: Optional[str]) -> Dict[str, Any]:
    """The confirming check, in this process: its canaries are subprocesses like any check's, so an
    interrupt stops them all and nothing is orphaned."""
    from inductor_doctor.check.command import CheckRequest, run_check
    from inductor_doctor.model import FailOn, exit_code_for

    try:
        report = run_check(CheckRequest(python=python, only=list(ids)))
    except UsageError as exc:
        return {"ran": False, "exit_code": None, "results": [], "error": str(exc)}
    return {"ran": True, "exit_code": int(exit_code_for(report.findings, FailOn.AFFECTED)),
            "results": [f.to_dict() for f in report.findings], "error": None}


# --- output ------------------------------------------------------------------------------------


def to_dict(result: TriageResult) -> Dict[str, Any]:
    from inductor_doctor.kb import KB_VERSION
    from inductor_doctor.version import __version__

    matched = result.matched
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "kb_version": KB_VERSION,
        "environment": {
            "log": {
                "source": result.log.source,
                "bytes": result.log.size,
                "lines": result.log.lines,
                "truncated": result.log.truncated,
                "ansi_stripped": result.log.ansi_stripped,
                "encoding": result.log.encoding,
            },
            "versions": result.versions,
        },
        "results": [m.to_dict() for m in result.matches],
        "summary": {
            "matched": len(matched),
            "exact": sum(m.confidence == EXACT for m in matched),
            "partial": sum(m.confidence == PARTIAL for m in matched),
            "version_only": sum(m.confidence == VERSION_ONLY for m in result.matches),
        },
        "check": result.check,
        "meta": {"duration_s": round(result.duration_s, 3)},
    }


def triage(log: str, confirm: bool = False, python: Optional[str] = None) -> TriageResult:
    """`explain --log`: read, match, and offer (or, with `confirm`, run) the confirming check."""
    from inductor_doctor.kb import registry

    if python:
        from inductor_doctor.probe.target import resolve_python

        resolve_python(python)  # a bad --python is a usage error before any work
    start = time.perf_counter()
    log_input = read_log(log)
    result = triage_text(log_input, list(registry()))
    result.check = offer_check(result, python, confirm)
    result.duration_s = time.perf_counter() - start
    return result
