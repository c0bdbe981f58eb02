"""`fix` as a person reads it: per flagged issue, the workarounds verified here first, then advice."""

from __future__ import annotations

from typing import Any, Mapping

from inductor_doctor.render.fix_shell import when
from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import BAD, DIM, GOOD, STRONG, WARN, terminal_width, use_color


def render(data: Mapping[str, Any], **_: Any) -> str:
    out = Writer(terminal_width(), use_color())
    out.para(f"from the check of {data.get('python')}{when(data)}", DIM)
    differ = data.get("settings_differ") or []
    if differ:
        out.para(f"that check ran under other settings ({'; '.join(differ)}): its findings are theirs; "
                 "run `inductor-doctor check` again for these", WARN)
    items = list(data.get("results") or [])
    if not items:
        out.line("fix: nothing to fix: the last check flagged no issue (affected or likely)", GOOD)
    by_issue: dict = {}
    for item in items:
        by_issue.setdefault(item["issue"], []).append(item)
    for issue, rows in by_issue.items():
        out.spans((issue, STRONG), ("  " + ", ".join(rows[0]["devices"]), DIM))
        out.para(rows[0]["title"], indent=2, style=DIM)
        for row in sorted(rows, key=lambda r: not r["verified"]):
            mark, style = ("verified", GOOD) if row["verified"] else ("advice", "")
            out.spans(("  " + mark.ljust(9), style), (row["command"] or row["text"], ""))
            out.para(row["how"], indent=13, style=DIM)
    for note in data.get("skipped") or []:
        out.para(f"not offered, already met: {note}", style=DIM)
    summary = data.get("summary") or {}
    if summary.get("verified"):
        out.line()
        out.line('apply the verified ones: eval "$(inductor-doctor fix --shell)"', STRONG)
    elif items:
        out.line()
        out.line("none of these could be verified here: apply the advice by hand, then check again", BAD)
    return out.text()
