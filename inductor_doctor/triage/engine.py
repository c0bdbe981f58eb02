"""Which known issues a log matches, best first, with the evidence: the engine of `explain --log`.

The command is `commands/triage.py`; `triage/diagnosis.py` is the door for callers that hold a
failing program's output (`run`, `why`, the hook). The user has a failure and a log, not a
diagnosis. Triage reads the log (a file or stdin; any size, colour codes, Windows line endings),
looks for every known issue's signatures (the same `KnownIssue.signatures` canaries are classified
with, so there is one copy of each), and says how sure it is in words: "this is X" only when an
exact signature stands in the issue's own context (`triage/context.py`) and the versions the log
states fit the issue's range (`triage/versions.py`); "this looks like X, because ..." otherwise;
nothing when nothing points at a known issue. It then offers the one command that confirms the
diagnosis on this machine (`check --only <ids>`, `offer_check`), which `--check` runs.

A log is diagnosed (`TriageResult.diagnosed`, exit 0) by a sure match ("this is X"; with `--match
possible`, a "looks like" too); an unusable input (missing, empty, binary) is a `UsageError`.
Nothing here imports torch or runs anything.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.document import Document, Policy
from inductor_doctor.core.model import ExitCode, KnownIssue, Severity, UsageError
from inductor_doctor.kb import KB_VERSION
from inductor_doctor.triage.context import DROP, POSSIBLE, LogContext, predicates
from inductor_doctor.triage.facts import FACT_PREDICATES, FACTS
from inductor_doctor.triage.stream import LogStats, ProbeHits, ScanResult, Source, blocks, scan_stream
from inductor_doctor.triage.versions import already_met, in_range

FIND_SPEC_TIMEOUT_S = 30.0

EXACT, PARTIAL, VERSION_ONLY = "exact", "partial", "version-only"
#: An evidence line that is not the error but the context that makes it sure (LD_LIBRARY_PATH, say).
CONTEXT = "context"


@dataclass
class LogInput:
    """A log as triage saw it: where it came from and what reading it found.

    `data` holds the text only where a caller already had it in memory (`triage_text`); a log
    streamed from a file or a pipe is never held whole (`triage_stream`).
    """

    source: str  # the path, or "-" for stdin
    data: bytes = b""
    size: int = 0  # bytes read
    truncated: bool = False
    ansi_stripped: bool = False
    encoding: str = "utf-8"
    line_count: Optional[int] = None

    @property
    def lines(self) -> int:
        if self.line_count is not None:
            return self.line_count
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
    #: A possible match's deciding fact of a machine (`Signature.decided_by`).
    decided_by: Optional[str] = None

    @property
    def assessment(self) -> str:
        """What a user reads first: "this is X" only for an anchored exact match."""
        if self.confidence == EXACT:
            return f"this is {self.issue.id}"
        if self.confidence == PARTIAL:
            return f"this looks like {self.issue.id}"
        if self.confidence == POSSIBLE:
            return f"possibly {self.issue.id}"
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
            "decided_by": self.decided_by,
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
class TriageResult(Document):
    """The `explain --log` document: the matches, best first, and the confirming check."""

    log: LogInput
    matches: List[IssueMatch]  # exact/partial, best first; or version-only hints when none
    versions: Dict[str, List[str]]
    duration_s: float = 0.0
    check: Dict[str, Any] = field(default_factory=dict)
    command: str = "triage"
    #: What counts as a diagnosis for the exit code: "sure" ("this is X" only) or "possible".
    match_at: str = "sure"
    kb_version: str = KB_VERSION

    @property
    def matched(self) -> List[IssueMatch]:
        return [m for m in self.matches if m.confidence != VERSION_ONLY]

    @property
    def diagnosed(self) -> bool:
        """The exit-code contract: a log is diagnosed (exit 0) by a sure match ("this is X"); a
        "looks like" alone counts only with `match_at="possible"` (`--match possible`)."""
        if self.match_at == "possible":
            return bool(self.matched)
        return any(m.confidence == EXACT for m in self.matches)

    def outcome(self, policy: Policy) -> ExitCode:
        """0: the log is diagnosed; 1: it is not."""
        return ExitCode.OK if self.diagnosed else ExitCode.FINDINGS

    def body(self) -> Dict[str, Any]:
        matched = self.matched
        return {
            "environment": {
                "log": {
                    "source": self.log.source,
                    "bytes": self.log.size,
                    "lines": self.log.lines,
                    "truncated": self.log.truncated,
                    "ansi_stripped": self.log.ansi_stripped,
                    "encoding": self.log.encoding,
                },
                "versions": self.versions,
            },
            "results": [m.to_dict() for m in self.matches],
            "summary": {
                "matched": len(matched),
                "exact": sum(m.confidence == EXACT for m in matched),
                "partial": sum(m.confidence == PARTIAL for m in matched),
                "possible": sum(m.confidence == POSSIBLE for m in matched),
                "version_only": sum(m.confidence == VERSION_ONLY for m in self.matches),
                "diagnosed": self.diagnosed,
                "match": self.match_at,
            },
            "check": self.check,
            "meta": {"duration_s": round(self.duration_s, 3)},
        }


# --- reading -----------------------------------------------------------------------------------


def _unreadable(source: str, exc: OSError) -> UsageError:
    """The one line for a log that cannot be read (opened, or read to its end)."""
    shown = "stdin" if source == "-" else source
    return UsageError(f"{shown}: cannot read ({exc.strerror or type(exc).__name__}) — check the path")


def open_log(source: str) -> Tuple[IO[bytes], bool]:
    """A path or `-` as a binary stream (and whether the caller must close it); a directory or an
    unreadable path is a one-line UsageError (exit 2), never a traceback."""
    if source == "-":
        if sys.stdin.isatty():
            sys.stderr.write("inductor-doctor: paste the log, then Ctrl-D (Ctrl-Z Enter on Windows)\n")
        return sys.stdin.buffer, False
    path = Path(source).expanduser()
    if path.is_dir():
        raise UsageError(f"{source}: is a directory — pass a log file, or - for stdin")
    try:
        return path.open("rb"), True
    except OSError as exc:
        raise _unreadable(source, exc) from None


def read_log(source: str) -> LogInput:
    """A whole log in memory, normalized (ANSI stripped, UTF-8): for small logs and tests only;
    triage itself streams (`triage_file`)."""
    fh, close = open_log(source)
    stats = LogStats(source)
    try:
        data = b"".join(blocks(fh, stats))
    except OSError as exc:
        raise _unreadable(source, exc) from None
    finally:
        if close:
            fh.close()
    if not data.strip():
        shown = "stdin" if source == "-" else source
        raise UsageError(f"{shown}: empty — paste the error log or traceback (a file, or - for stdin)")
    return LogInput(source, data, stats.size, stats.truncated, stats.ansi_stripped, stats.encoding)


# --- matching ----------------------------------------------------------------------------------


def triage_stream(
    source: Source,
    issues: Optional[Sequence[KnownIssue]] = None,
    *,
    name: str = "-",
) -> TriageResult:
    """Triage a log as it streams by, in bounded memory: the entry point for any caller.

    `source` is a binary file object (an open log, `sys.stdin.buffer`, a process's stdout pipe)
    or an iterable of lines (`bytes` or `str`, with their line endings, as `for line in fh` or a
    tee of a child's output yields them). The log is read once, block by block, to its end (a
    pipe or an iterable stops after `stream.MAX_STREAM_BYTES`, and the result says `truncated`);
    memory stays a few blocks (`stream.BLOCK`) whatever its size, and the result is the same
    document `explain --log` prints (`TriageResult.to_dict()`, schema `triage/v1`). `issues`
    defaults to the registry's; `name` is what the document calls the log ("-" is stdin).

    Raises `UsageError` (one line, exit 2) when the first block is not a text log (binary, gzip)
    or the log is empty. Nothing here imports torch or runs anything; `offer_check` adds the
    confirming check afterwards.
    """
    if issues is None:
        from inductor_doctor.kb import registry

        issues = list(registry())
    start = time.perf_counter()
    scanned = scan_stream(source, name, issues, _asked(issues))
    stats = scanned.stats
    log = LogInput(
        stats.source, b"", stats.size, stats.truncated, stats.ansi_stripped, stats.encoding, stats.lines
    )
    return _decide(log, issues, scanned, start)


def triage_file(source: str, issues: Optional[Sequence[KnownIssue]] = None) -> TriageResult:
    """`triage_stream` of a path, or of stdin for "-"; an unreadable path is a UsageError."""
    fh, close = open_log(source)
    try:
        return triage_stream(fh, issues, name=source)
    except OSError as exc:
        raise _unreadable(source, exc) from None
    finally:
        if close:
            fh.close()


def triage_text(log: LogInput, issues: Sequence[KnownIssue]) -> TriageResult:
    """A log already in memory (`LogInput.data`), judged exactly as a streamed one."""
    start = time.perf_counter()
    scanned = scan_stream(io.BytesIO(log.data), log.source, issues, _asked(issues))
    log.line_count = scanned.stats.lines
    log.ansi_stripped = log.ansi_stripped or scanned.stats.ansi_stripped
    return _decide(log, issues, scanned, start)


def _asked(issues: Sequence[KnownIssue]) -> set:
    """Every log-wide question judging these issues' matches will ask, the facts' included."""
    sigs = [sig for issue in issues for sig in issue.signatures]
    asked = predicates(sigs)
    for sig in sigs:
        asked.update(FACT_PREDICATES.get(sig.fact, ()))
    return asked


def _decide(log: LogInput, issues: Sequence[KnownIssue], scanned: ScanResult, start: float) -> TriageResult:
    """Signatures first, judged in their context; the log's versions then confirm or demote.

    A partial match is a symptom several issues share, or an issue's error out of its context:
    when any issue matched exactly, partial-only matches of other issues are dropped; otherwise
    they are reported as "looks like", each with its reason. A weak match with nothing of its
    issue's subject in the log, and any match beside the sign of a look-alike, is no match.
    """
    by_issue: Dict[str, List[ProbeHits]] = {}
    for ph in scanned.hits:
        if ph.found:
            by_issue.setdefault(ph.probe.issue_id, []).append(ph)
    issue_by_id = {i.id: i for i in issues}
    context = LogContext(scanned.seen)
    versions = scanned.versions
    matches = [
        m
        for issue_id, issue_hits in by_issue.items()
        if (m := _match(issue_by_id[issue_id], issue_hits, context, versions)) is not None
    ]
    if any(m.confidence == EXACT for m in matches):
        matches = [m for m in matches if m.confidence == EXACT]
    if not matches:
        matches = _version_hints(issues, versions)
    matches.sort(key=lambda m: (-m.score, m.issue.severity is not Severity.ERROR, m.issue.id))
    return TriageResult(log, matches, versions, time.perf_counter() - start)


def _match(
    issue: KnownIssue,
    hits: List[ProbeHits],
    context: LogContext,
    versions: Mapping[str, List[str]],
) -> Optional[IssueMatch]:
    """One issue's evidence, exact only where a match stands in the issue's own context; None when
    nothing of it counts (a weak match without the issue's subject, or beside a look-alike's sign)."""
    evidence: List[Evidence] = []
    reasons: List[str] = []
    ranged = True  # whether every exact match's wording is bounded by the issue's affected range
    counted = 0
    occurrences = 0
    stated: Optional[str] = None  # a fact of the log that made a weak match sure
    decided_by: Optional[str] = None  # the machine's fact that decides a possible match
    for ph in hits:
        sig = ph.probe.signature
        kept = False
        for f in ph.found:
            verdict, why = context.judge(sig, f.near, f.line)
            if verdict == DROP:
                continue
            if verdict != EXACT and sig.fact in FACTS:
                found = FACTS[sig.fact](context, versions)
                if found is not None:
                    seen, stated = found
                    verdict = EXACT
                    evidence.append(Evidence(seen.line, seen.text, sig.fact, CONTEXT))
            kept = True
            if verdict == POSSIBLE:
                decided_by = decided_by or sig.decided_by
            evidence.append(Evidence(f.line, f.text, sig.pattern, verdict))
            if verdict == EXACT:
                ranged = ranged and sig.ranged
                seen = context.seen.get((sig.anchor, sig.flags)) if sig.anchor else None
                if seen is not None and sig.anchor_lines is None:  # the fact that made it sure
                    evidence.append(Evidence(seen.line, seen.text, sig.anchor, CONTEXT))
            elif (sig.strength == "exact" or verdict == POSSIBLE) and why:
                reasons.append(why)
        if kept:
            counted += 1
            occurrences += ph.count
    if not evidence:
        return None
    exact = any(e.strength == EXACT for e in evidence)
    possible = not exact and all(e.strength == POSSIBLE for e in evidence)
    if possible:  # the log cannot tell: `decided_by` names what does
        reasons = [r for r in reasons if "nothing around it" in r]
    elif not exact:
        reasons = [r for r in reasons if "nothing around it" not in r]
    if not exact and not reasons:
        first = min(evidence, key=lambda e: e.line)
        reasons.append(f"line {first.line} shows a symptom other causes share too")
    evidence.sort(key=lambda e: ({EXACT: 0, CONTEXT: 1}.get(e.strength, 2), e.line))
    match = IssueMatch(
        issue,
        EXACT if exact else POSSIBLE if possible else PARTIAL,
        score=(100 if exact else 20 if possible else 40) + 10 * (counted - 1),
        evidence=_dedupe(evidence)[:5],
        occurrences=occurrences,
        because=[] if exact else _dedupe_text(reasons)[:2],
        decided_by=decided_by if possible else None,
    )
    _weigh_versions(match, versions, ranged)
    if stated and match.confidence == EXACT:
        match.note = stated + (f"; {match.note}" if match.note else "")
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


def offer_check(result: TriageResult, python: Optional[str]) -> Dict[str, Any]:
    """The confirming `check --only` command and whether it can run here (the command runs it with
    `--check`)."""
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
