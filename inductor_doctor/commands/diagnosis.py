"""The one door from `run`, `why` and the exception hook into the log triage.

All three hold a failing program's output as bytes (what `Capture` kept, a traceback the hook
formatted) rather than a log file, so they share this function, and only it knows how the triage is
called. Imported only once something failed: a succeeding command never loads the knowledge base.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def triage_output(data: bytes, source: str) -> Any:
    """The triage document (`explain --log`'s `TriageResult`) of a program's output, or None when
    it printed nothing to read. Binary bytes in it are dropped, never refused: the program wrote them."""
    import io

    from inductor_doctor.commands.triage import triage_stream
    from inductor_doctor.core.codes import UsageError

    text = data.replace(b"\x00", b"")
    if not text.strip():
        return None
    try:
        return triage_stream(io.BytesIO(text), name=source)
    except UsageError:  # not text at all (the program wrote binary to stderr): nothing to read
        return None


def summary(result: Any) -> Dict[str, Any]:
    """What `run`, `why` and the hook show of a triage: the best match (or none), in a small dict."""
    if result is None:
        return {"matched": False, "id": None, "confidence": None,
                "assessment": "its output holds no text to read"}
    matched = result.matched
    if not matched:
        return {"matched": False, "id": None, "confidence": None,
                "assessment": "no known issue matches this failure"}
    best = matched[0]
    data = best.to_dict()
    usable = [w for w in data["workarounds"] if not w.get("moot")]
    return {
        "matched": True,
        "id": best.issue.id,
        "title": best.issue.title,
        "confidence": best.confidence,
        "assessment": best.assessment,
        "because": data["because"],
        "evidence": data["evidence"][:2],
        "workarounds": usable[:3],
        "others": [m.issue.id for m in matched[1:4]],
        "explain": data["explain"],
    }


def matched_ids(result: Any, limit: int = 3) -> List[str]:
    return [] if result is None else [m.issue.id for m in result.matched[:limit]]


def confirm_here(ids: List[str], timeout_s: Optional[float], python: Optional[str] = None) -> Dict[str, Any]:
    """The matched issues' checks, canaries included, run now on this machine (`check --only`)."""
    from inductor_doctor.commands.check import CheckRequest, run_check
    from inductor_doctor.core.codes import UsageError

    if not ids:
        return {"ran": False, "results": [], "error": None}
    try:
        report = run_check(CheckRequest(python=python, only=list(ids), timeout_s=timeout_s, remember=False))
    except UsageError as exc:
        return {"ran": False, "results": [], "error": str(exc)}
    return {"ran": True, "results": [f.to_dict() for f in report.findings], "error": None}
