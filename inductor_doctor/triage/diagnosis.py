"""The one door from `run`, `why` and the exception hook into the log triage (`triage/engine.py`).

All three hold a failing program's output as bytes (what `Capture` kept, a traceback the hook
formatted) rather than a log file, so they share this function, and only it knows how the triage is
called. Imported only once something failed: a succeeding command never loads the knowledge base.
"""

from __future__ import annotations

from typing import Any, Dict, List


def triage_output(data: bytes, source: str) -> Any:
    """The triage document (`explain --log`'s `TriageResult`) of a program's output, or None when
    it printed nothing to read. Binary bytes in it are dropped, never refused: the program wrote them."""
    import io

    from inductor_doctor.core.codes import UsageError
    from inductor_doctor.triage.engine import triage_stream

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
