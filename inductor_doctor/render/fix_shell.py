"""`fix --shell`: the verified workarounds as lines a POSIX shell can `eval`; advice as comments.

Only a verified workaround becomes a command, exactly as the knowledge base writes it (a `mkdir -p`
before the `export` that names the directory included); everything else is a comment, so that
`eval "$(inductor-doctor fix --shell)"` can never install, upgrade or remove anything.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple


def head(data: Mapping[str, Any]) -> Tuple[List[str], List[Mapping[str, Any]]]:
    """The comment lines every format of `fix` starts with, and the items."""
    out: List[str] = [f"# inductor-doctor fix, from the check of {data.get('python')}{when(data)}"]
    differ = data.get("settings_differ") or []
    if differ:
        out.append(f"# that check ran under other settings ({'; '.join(differ)}): its findings are "
                   "theirs; run `inductor-doctor check` again for these")
    items = list(data.get("results") or [])
    if not items:
        out.append("# nothing to fix: the last check flagged no issue")
    return out, items


def when(data: Mapping[str, Any]) -> str:
    """` (2026-11-25 15:30 UTC)`: when the check on record finished, or nothing."""
    at = data.get("checked_at")
    if not isinstance(at, str) or len(at) < 16:
        return ""
    return f" ({at[:10]} {at[11:16]}{' UTC' if at.endswith(('+00:00', 'Z')) else ''})"


def render(data: Mapping[str, Any], **_: Any) -> str:
    out, items = head(data)
    for item in items:
        if item["verified"] and item["command"]:
            out.append(f"# {item['issue']}: {item['how']}")
            out.append(item["command"])
    advice = [i for i in items if not (i["verified"] and i["command"])]
    if advice:
        out.append("# not verified here (advice; run by hand if it applies):")
        for item in advice:
            out.append(f"#   {item['issue']}: {_one_line(item['command'] or item['text'])}")
    return "\n".join(out) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())
