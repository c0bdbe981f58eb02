"""`check --artifact` and `plan --artifact`: what one artifact's row is decided by.

Each artifact is read (artifact/: what it was built for) and put to the artifact issues, each a
`judge_artifact` hook of its known issue, in their `load_order`: the first that says `affected` decides,
else the first `likely`; otherwise it is `ok`, with the facts that matched. In `check` the row is a
cell of the engine (`check/engine.py`'s `ArtifactCell`): planned, run, replayed and kept like every
cell, where the canary (target/canaries/artifact_load.py) loads the artifact for real in a
subprocess on the device it targets, and check/verdict.py weighs the two as for any issue. The
row's id is `artifact.<file name>`; `issue` names the known issue behind its verdict.

The canary's outcome is kept under the store's key of the job joined with what identifies the
artifact itself without reading it whole (`artifact_key`): touch the artifact, rebuild it, or change
torch, and the next check loads it again; `--no-cache` always does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.artifact.host import host_view
from inductor_doctor.check.cache import CanaryStore
from inductor_doctor.check.classify import canary_outcome
from inductor_doctor.check.runner import HARNESS, CanaryJob, CanaryRun
from inductor_doctor.check.verdict import CanaryOutcome, Decision, decide
from inductor_doctor.core.codes import own_bug
from inductor_doctor.core.model import (
    Basis,
    Finding,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    UsageError,
)
from inductor_doctor.target import canary_path

CANARY = "artifact_load.py"
CANARY_TIMEOUT_S = 300.0
#: What of a file artifact is hashed for its key: its first and last bytes (a zip's central
#: directory, with every member's CRC, is at its end), never the whole of a gigabyte.
KEY_EDGE_BYTES = 64 * 1024
#: A cache directory with more files than this is loaded every time rather than listed for a key.
KEY_MAX_FILES = 50_000
REUSED = ("canary: its outcome from an earlier check, reused: the artifact (size, time, contents "
          "read) and the stack are unchanged; --no-cache loads it again")


@dataclass
class Judged:
    """One artifact against one host: each class's outcome, and the row's."""

    artifact: Any  # artifact.facts.ArtifactFacts
    outcomes: List[Tuple[KnownIssue, RuleOutcome]]
    decided: RuleOutcome
    issue: Optional[KnownIssue]  # the class behind the verdict (None: ok, nothing failed)
    device: str
    planned: bool = False


def _classes() -> List[KnownIssue]:
    """The artifact issues (those with a `judge_artifact` hook), in the order a load meets them."""
    from inductor_doctor.kb import registry

    return sorted((i for i in registry() if i.judge_artifact is not None), key=lambda i: i.load_order)


def read(paths: Sequence[str]) -> List[Any]:
    """Every artifact, read; one that is missing or not an artifact is the user's error (exit 2)."""
    from inductor_doctor.artifact import read_artifact

    out = []
    for path in paths:
        if not os.path.exists(path):
            raise UsageError(f"--artifact {path}: no such file or directory")
        art = read_artifact(path)
        if art.error:
            raise UsageError(f"--artifact {path}: {art.error}")
        out.append(art)
    return out


def judge(art: Any, host: Any, gpus: Sequence[str] = ()) -> Judged:
    outcomes: List[Tuple[KnownIssue, RuleOutcome]] = []
    for issue in _classes():
        assert issue.judge_artifact is not None
        try:
            o = issue.judge_artifact(art, host)
        except Exception as exc:  # noqa: BLE001 - a reader's surprise is a finding, never a traceback
            if own_bug(exc):
                raise
            o = RuleOutcome(
                Status.INCONCLUSIVE,
                f"{issue.id} could not judge it: {type(exc).__name__}: {exc}",
                Basis.STATIC,
            )
        if o is not None:
            outcomes.append((issue, o))
    decided, issue = _decide(art, host, outcomes)
    device = _device(art, host, decided)
    return Judged(art, outcomes, decided, issue, device, bool(host.planned))


def _decide(
    art: Any, host: Any, outcomes: List[Tuple[KnownIssue, RuleOutcome]]
) -> Tuple[RuleOutcome, Optional[KnownIssue]]:
    for wanted in (Status.AFFECTED, Status.LIKELY, Status.INCONCLUSIVE):
        for issue, o in outcomes:
            if o.status is wanted:
                return replace(o, reason=f"{issue.id}: {o.reason}"), issue
    oks = [o for _, o in outcomes if o.status is Status.OK]
    if not oks:
        why = (
            " (a .pt2 records no torch release; --gpu compares its GPU code)"
            if host.planned and art.kind == "pt2"
            else ""
        )
        return RuleOutcome(
            Status.INCONCLUSIVE,
            f"nothing in {art.name} could be compared with {host.what}{why}",
            Basis.STATIC,
        ), None
    basis = Basis.VERSION if any(o.basis is Basis.VERSION for o in oks) else Basis.STATIC
    return RuleOutcome(Status.OK, "; ".join(o.reason for o in oks), basis), None


def _device(art: Any, host: Any, decided: RuleOutcome) -> str:
    if (art.device or "cpu") != "cuda":
        return "cpu"
    gpus = sorted(host.gpus)
    bad = (decided.details or {}).get("gpus") or []
    for g in gpus:
        if any(b.startswith(g + " ") for b in bad):
            return g
    return gpus[0] if gpus else "cuda"


def row_ids(arts: Sequence[Any]) -> List[str]:
    """`artifact.model.pt2`: the file name, lower-case, in the characters an id may hold; unique."""
    ids: List[str] = []
    for art in arts:
        base = re.sub(r"[^a-z0-9.-]+", "-", art.name.lower()).strip(".-") or "artifact"
        rid, n = f"artifact.{base}", 2
        while rid in ids:
            rid, n = f"artifact.{base}-{n}", n + 1
        ids.append(rid)
    return ids


def _finding(
    rid: str,
    j: Judged,
    status: Status,
    basis: Basis,
    reason: str,
    evidence: Tuple[str, ...],
    duration_s: float = 0.0,
) -> Finding:
    issue = j.issue
    where = "on the planned stack" if j.planned else "here"
    bad = status in (Status.AFFECTED, Status.LIKELY)
    return Finding(
        id=rid,
        title=f"{j.artifact.path}: will this {j.artifact.kind} load and run {where}?",
        device=j.device,
        status=status,
        basis=basis,
        reason=reason,
        severity=issue.severity if issue is not None else Severity.ERROR,
        workarounds=issue.workarounds if issue is not None and bad else (),
        upstream=issue.upstream if issue is not None else (),
        duration_s=duration_s,
        evidence=evidence,
        issue=issue.id if issue is not None else None,
    )


def _evidence(j: Judged, host: Any, said: str = "") -> Tuple[str, ...]:
    from inductor_doctor.kb._artifacts import built_for

    lines = built_for(j.artifact)
    said = said or j.decided.reason
    lines += [
        f"{issue.id}: {o.status.value}: {o.reason}" for issue, o in j.outcomes if not said.endswith(o.reason)
    ][:5]
    return tuple(line[:300] for line in lines)


def artifact_key(art: Any) -> Optional[str]:
    """What identifies an artifact's contents for the canary cache, cheaply. A file: its size and
    modification time, a hash of its first and last KEY_EDGE_BYTES, and of what the reader found in
    it (metadata, objects, the torch that wrote it). A cache directory: the path, size and time of
    every kernel `.so` in it, which is what the canary loads. None when that cannot be had (an
    unreadable file, a directory too large to list): such an artifact is loaded every time."""
    h = hashlib.sha256()
    try:
        if os.path.isdir(art.path):
            count = 0
            for root, dirs, files in os.walk(art.path):
                dirs.sort()
                count += len(files)
                if count > KEY_MAX_FILES:
                    return None
                for name in sorted(files):
                    if name.endswith(".so"):
                        full = os.path.join(root, name)
                        st = os.stat(full)
                        rel = os.path.relpath(full, art.path)
                        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        else:
            st = os.stat(art.path)
            h.update(f"{st.st_size}\0{st.st_mtime_ns}\n".encode())
            with open(art.path, "rb") as f:
                h.update(f.read(KEY_EDGE_BYTES))
                if st.st_size > 2 * KEY_EDGE_BYTES:
                    f.seek(st.st_size - KEY_EDGE_BYTES)
                    h.update(f.read(KEY_EDGE_BYTES))
            read = {k: v for k, v in art.to_dict().items() if k not in ("read_s", "notes")}
            h.update(json.dumps(read, sort_keys=True, default=str).encode())
    except OSError:
        return None
    return h.hexdigest()


def stored_key(store: Any, job: CanaryJob, art: Any) -> Optional[str]:
    """The store's key of the job joined with the artifact's own: None keeps and reuses nothing."""
    base = store.key(job, HARNESS)
    own = artifact_key(art) if base is not None else None
    if base is None or own is None:
        return None
    return hashlib.sha256(f"artifact\0{base}\0{own}".encode()).hexdigest()[:40]


def load_job(rid: str, j: Judged, python: str, timeout_s: Optional[float], env: Dict[str, str]) -> CanaryJob:
    """The load canary of one artifact, on the device it targets."""
    return CanaryJob(
        key=f"{rid}@{j.device}",
        script=canary_path(CANARY),
        device=j.device,
        python=python,
        timeout_s=timeout_s or CANARY_TIMEOUT_S,
        needs=("torch",),
        env={**env, "INDUCTOR_DOCTOR_ARTIFACT_PATH": j.artifact.path,
             "INDUCTOR_DOCTOR_ARTIFACT_KIND": j.artifact.kind},
    )


def load_outcome(run: CanaryRun) -> CanaryOutcome:
    """What the load canary says, judged by every artifact issue's signatures; a death by SIGILL is
    the CPU ISA's, though the shell's "Illegal instruction" is never printed."""
    if run.signal == signal.SIGILL:
        return CanaryOutcome(
            Status.AFFECTED,
            "canary reproduced it: the process died with SIGILL "
            "(Illegal instruction) loading or running the artifact",
        )
    return canary_outcome(_signatures(), run)


def row_finding(rid: str, j: Judged, host: Any, verdict: Decision, run: Optional[CanaryRun]) -> Finding:
    """The artifact's row: the verdict, the known issue behind it (named by the canary's error where
    no static judgement did), and what the artifact was built for."""
    outcome = load_outcome(run) if run is not None else None
    if outcome is not None and outcome.status is Status.AFFECTED and j.issue is None:
        j = replace(j, issue=_which(outcome.reason))
    reason = verdict.reason.strip().splitlines()[0] if verdict.reason.strip() else verdict.status.value
    reused = (REUSED,) if run is not None and run.cached else ()
    return _finding(rid, j, verdict.status, verdict.basis, reason,
                    _evidence(j, host, reason) + tuple(verdict.evidence) + reused,
                    run.duration_s if run else 0.0)


#: What a canary's failure says in its own words, where the kb signatures want a log's context
#: (in the canary, the artifact is the context): class id → pattern.
CANARY_SIGNATURES = (
    (
        "artifact-gpu-arch-missing",
        r"no kernel image is available for execution on the device|"
        r"CUDA_ERROR_NO_BINARY_FOR_GPU|device kernel image is invalid",
    ),
    ("artifact-cpu-isa-missing", r"Illegal instruction"),
    ("artifact-glibcxx-too-old", r"version `(GLIBCXX|CXXABI|GLIBC)_[\d.]+' not found \(required by"),
)


def _canary_sigs() -> Tuple[Signature, ...]:
    return tuple(Signature(p, note=i) for i, p in CANARY_SIGNATURES)


def _signatures() -> KnownIssue:
    """One issue holding every artifact class's exact signatures: what a canary's failure is judged by."""
    sigs = tuple(s for issue in _classes() for s in issue.signatures if s.strength == "exact")
    sigs += _canary_sigs()
    first = _classes()[0]
    return replace(first, id="artifact-load", signatures=tuple(replace(s, log_context=()) for s in sigs))


def _which(reason: str) -> Optional[KnownIssue]:
    for sig in _canary_sigs():
        if sig.search(reason):
            return next((i for i in _classes() if i.id == sig.note), None)
    for issue in _classes():
        if any(s.strength == "exact" and replace(s, log_context=()).search(reason) for s in issue.signatures):
            return issue
    return None


def plan_artifacts(paths: Sequence[str], host: Any) -> List[Finding]:
    """One finding per artifact against a planned stack: the static comparison alone."""
    arts = read(paths)
    out = []
    for rid, art in zip(row_ids(arts), arts):
        j = judge(art, host)
        status = (
            Status.LIKELY
            if j.decided.status is Status.AFFECTED and j.decided.basis is Basis.VERSION
            else j.decided.status
        )
        out.append(
            _finding(
                rid,
                j,
                status,
                Basis.STATIC if j.decided.basis is Basis.STATIC else Basis.VERSION,
                j.decided.reason,
                _evidence(j, host),
            )
        )
    return out


# --- the row as a cell of the engine --------------------------------------------------------------


@dataclass
class ArtifactCell:
    """One `--artifact` on the device it targets, a cell of the engine as an issue's is: the artifact
    issues' judgement (the row's rule) and, where that device is here, the canary that loads it."""

    rid: str  # the row's id: `artifact.<file name>`
    judged: Judged
    host: Any  # the host the artifact is judged against (`artifact.host.HostView`)
    present: bool
    job: Optional[CanaryJob] = None
    not_run: str = ""
    key: Tuple[str, str] = ("", "")  # (rid, device): where its canary run is kept, as a `Cell`'s

    def __post_init__(self) -> None:
        self.key = (self.rid, self.judged.device)

    def store_key(self, store: CanaryStore) -> Optional[str]:
        """The job's key joined with the artifact's own (its size, time and contents read)."""
        assert self.job is not None
        return stored_key(store, self.job, self.judged.artifact)

    def decision(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Decision:
        outcome: Optional[CanaryOutcome] = None
        if canary_run is not None and self.job is not None:
            outcome = load_outcome(canary_run)
        elif self.job is not None and interrupted:
            outcome = CanaryOutcome(Status.INCONCLUSIVE, "interrupted before the canary ran")
        return decide(self.judged.decided, self.present, outcome, self.not_run,
                      self.judged.artifact.device or "cpu")

    def finding(self, canary_run: Optional[CanaryRun], interrupted: bool = False) -> Finding:
        verdict = self.decision(canary_run, interrupted)
        return row_finding(self.rid, self.judged, self.host, verdict, canary_run)


def artifact_cells(arts: Sequence[Any], facts: Any, python: str, static: bool, timeout_s: Optional[float],
                   env: Dict[str, str]) -> List[ArtifactCell]:
    """One engine cell per artifact, judged against this host's facts; a load canary where its
    device is here (`env`: what every canary is given)."""
    host = host_view(facts)
    present = {"cpu", *host.gpus}
    cells = []
    for rid, art in zip(row_ids(arts), arts):
        j = judge(art, host)
        here = j.device in present
        job = None if static or not here else load_job(rid, j, python, timeout_s, env)
        not_run = "--static skips canaries" if static else f"no {j.device} device here"
        cells.append(ArtifactCell(rid, j, host, here, job, not_run))
    return cells
