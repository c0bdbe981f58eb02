"""A canary run, classified: did it reproduce its issue, run clean, or say nothing we can trust?

The issue's own exact signatures decide `affected`, in whatever the canary printed; a death by a
signal counts only together with the signature (an abort is how many unrelated bugs end too). A
failure that is not the issue's signature is `inconclusive`, with the line that names its cause.
A clean run carries what the harness saw it exercise (`proof_of`); the verdict table accepts it as
`ok` only with that proof.
"""

from __future__ import annotations

import re
import signal as _signal
from typing import List, Optional, Tuple

from inductor_doctor.check.runner import CanaryRun
from inductor_doctor.check.verdict import CanaryOutcome
from inductor_doctor.core.model import KnownIssue, Status

EVIDENCE_LINES = 6


def _first_lines(text: str, n: int = EVIDENCE_LINES) -> Tuple[str, ...]:
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return tuple(line[:300] for line in lines[:n])


def _last_lines(text: str, n: int = EVIDENCE_LINES) -> Tuple[str, ...]:
    """The end of a traceback: where the exception is, not whichever frames a cut falls on."""
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return tuple(line[:300] for line in lines[-n:])


# Hints Dynamo appends to every compile failure; never the cause.
_BOILERPLATE = re.compile(
    r"^(Set TORCHDYNAMO_VERBOSE=|You can suppress this exception|For even more developer)"
)
_COMPILER_ERROR = re.compile(r"(?<![\w])(fatal )?error:")


def telling_line(message: str) -> str:
    """The line of an error message that names the cause: a compiler's `error:` line if there is
    one (Inductor's CppCompileError puts it mid-message), else the last line that is not a hint."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _BOILERPLATE.match(ln)]
    for line in lines:
        if _COMPILER_ERROR.search(line):
            return line
    return lines[-1] if lines else ""


def match_signature(issue: KnownIssue, text: str) -> Optional[Tuple[str, str]]:
    """The first exact signature found in `text`: (the matched line, the signature's note)."""
    for sig in issue.signatures:
        if sig.strength != "exact":
            continue
        m = sig.search(text)
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            line = text[start : end if end >= 0 else len(text)].strip()
            return line[:300], sig.note
    return None


def signal_name(num: int) -> str:
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def proof_of(run: CanaryRun) -> Tuple[Optional[str], str]:
    """(what the canary made the stack do on its device, or None when nothing shows the path under
    test ran; what was seen, for the reason). A CPU canary proves itself with C++ kernels Inductor
    compiled and the process loaded, a GPU one with GPU kernels compiled, the toolchain with either;
    what a canary declared through the harness counts everywhere (xla, a child interpreter)."""
    result = run.result or {}
    proof = result.get("proof")
    if not isinstance(proof, dict):
        why = result.get("proof_error") or "the harness reported no proof"
        return None, str(why)
    device = run.job.device
    graphs, cpu, gpu = (int(proof.get(k) or 0) for k in ("graphs", "cpu_kernels", "gpu_kernels"))
    declared = [str(d) for d in proof.get("declared") or []]
    did: List[str] = []  # what ran
    not_done: List[str] = []  # what did not, said only when nothing proves the path ran
    if graphs:
        did.append(f"Dynamo captured {_plural(graphs, 'graph')}")
    elif "graphs" in proof:
        not_done.append("Dynamo captured no graph")
    if cpu:
        did.append(f"{_plural(cpu, 'C++ kernel')} compiled and loaded")
    elif device == "cpu":
        not_done.append("no C++ kernel was loaded")
    if gpu:
        did.append(f"{_plural(gpu, 'GPU kernel')} compiled")
    elif device.startswith("cuda"):
        not_done.append("no GPU kernel was compiled")
    if device == "cpu":
        proven = cpu > 0
    elif device.startswith("cuda"):
        proven = gpu > 0
    elif device == "xla":
        proven = False
    else:
        proven = cpu > 0 or gpu > 0
    if proven or declared:
        return f"{'; '.join(did + declared)} on {device}", ""
    return None, "; ".join(did + not_done + declared) or "nothing"


def unproven_reason(run: CanaryRun, seen: str) -> str:
    """`ran, but nothing was compiled: ...`, with the settings still in effect as it ended."""
    result = run.result or {}
    reason = f"the canary ran, but nothing was compiled on {run.job.device}: {seen}"
    still = [str(s) for s in result.get("in_effect") or []]
    if still:
        reason += "; in effect as it ended: " + ", ".join(still)
    return reason


def classify(issue: KnownIssue, run: CanaryRun) -> Tuple[Status, str, Tuple[str, ...]]:
    """A canary run → (status, one-line reason, evidence lines)."""
    outcome = canary_outcome(issue, run)
    return outcome.status, outcome.reason, outcome.evidence


def canary_outcome(issue: KnownIssue, run: CanaryRun) -> CanaryOutcome:
    """What a canary run says about its issue, before any rule is weighed (check/verdict.py)."""
    status, reason, evidence = _classify(issue, run)
    result = run.result or {}
    partial = result.get("exercised") == "partial" and status is Status.OK
    set_aside = [str(s) for s in result.get("set_aside") or []]
    proof: Optional[str] = None
    if status is Status.OK and not partial:
        proof, seen = proof_of(run)
        if proof is None:
            reason = unproven_reason(run, seen)
        else:
            reason += f"; it exercised: {proof}"
            evidence = evidence + (f"exercised: {proof}",)
        if set_aside:
            reason += "; set aside for the canary: " + ", ".join(set_aside)
    if set_aside:
        evidence = evidence + ("set aside for the canary (it would make the test hollow): "
                               + ", ".join(set_aside),)
    if run.unreaped:
        reason += "; it could not be killed (stuck in the kernel, e.g. a hung GPU driver) and was left behind"
    return CanaryOutcome(status, reason, evidence, partial, proof)


def _classify(issue: KnownIssue, run: CanaryRun) -> Tuple[Status, str, Tuple[str, ...]]:
    if run.error:
        return Status.INCONCLUSIVE, f"canary could not run: {run.error}", ()
    result = run.result or {}
    if run.timed_out:
        seen = (f"it was at {run.last_seen}",) if run.last_seen else ()
        return (
            Status.INCONCLUSIVE,
            f"canary timed out after {run.job.timeout_s:g}s (raise --timeout if this machine is slow)",
            seen,
        )
    if run.interrupted:
        return Status.INCONCLUSIVE, "interrupted before the canary finished", ()
    text = "\n".join(
        [str(result.get("message", "")), str(result.get("traceback", "")), run.stdout, run.stderr]
    )
    status = result.get("status")
    if status == "ok":
        versions = result.get("versions") or {}
        pretty = ", ".join(f"{k} {v}" for k, v in versions.items())
        if result.get("exercised") == "partial":
            return Status.OK, f"{result.get('message') or 'part of it'}, clean", ()
        said = f": {result['message']}" if result.get("message") else ""
        return Status.OK, f"canary ran clean{' (' + pretty + ')' if pretty else ''}{said}", ()
    if status == "missing":
        return Status.NOT_APPLICABLE, str(result.get("message", "a needed module is missing")), ()
    if status == "skip":
        return Status.NOT_APPLICABLE, str(result.get("message", "not applicable here")), ()
    hit = match_signature(issue, text)
    sig = run.signal
    if hit:
        line, note = hit
        reason = f"canary reproduced it: {line}"
        if sig:
            reason += f" ({signal_name(sig)})"
        return Status.AFFECTED, reason, _first_lines(line)
    if status == "error":
        exc = str(result.get("exc_type", "error")).replace("builtins.", "")
        first = telling_line(str(result.get("message", "")))
        return (
            Status.INCONCLUSIVE,
            f"canary failed, but not with this issue's signature: {exc}: {first}"[:400],
            _last_lines(str(result.get("traceback", ""))[-3000:] or run.stderr[-3000:]),
        )
    if sig:
        return (
            Status.INCONCLUSIVE,
            f"canary crashed with {signal_name(sig)}, which is not this issue's signature",
            _first_lines(run.stderr[-4000:]),
        )
    return (
        Status.INCONCLUSIVE,
        f"canary exited (code {run.returncode}) without reporting a result",
        _first_lines(run.stderr[-4000:] or run.stdout[-4000:]),
    )
