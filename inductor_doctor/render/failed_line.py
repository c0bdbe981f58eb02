"""The one line a check or plan whose report went to `--output` writes to stderr when it fails.

A Dockerfile's gate (`RUN inductor-doctor check --static --fail-on likely --format json --output
FILE`) keeps its report in a file, and that file stays in the layer the failed step never commits:
without this line the build log said only "exit status 1". It names the findings that failed the
step, and where the whole report is.
"""

from __future__ import annotations

from typing import Any, Dict, List

#: Named one by one up to this many; the rest are counted.
NAMED = 4


def render(data: Dict[str, Any], output: str = "", **_: Any) -> str:
    """`inductor-doctor: 1 affected: cxx-compiler-missing on cpu; the report is in FILE`."""
    parts: List[str] = []
    for status in ("affected", "likely", "inconclusive"):
        hits = [f"{r['id']} on {r['device']}" for r in data.get("results") or []
                if r.get("status") == status and not r.get("suppressed")]
        if not hits:
            continue
        named = ", ".join(hits[:NAMED]) + (f" and {len(hits) - NAMED} more" if len(hits) > NAMED else "")
        parts.append(f"{len(hits)} {status}: {named}")
    found = "; ".join(parts) if parts else "findings at or above --fail-on"
    return f"inductor-doctor: {found}; the report is in {output}"
