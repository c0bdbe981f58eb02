"""`list` as a person reads it: one line per issue, the id whole (it is what `explain` takes)."""

from __future__ import annotations

from typing import Any, Mapping

from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import DIM, STRONG, WARN, terminal_width, use_color


def render(data: Mapping[str, Any], **_: Any) -> str:
    issues = list(data.get("issues", []))
    out = Writer(terminal_width(), use_color())
    id_width = max((len(i["id"]) for i in issues), default=2)
    for issue in issues:
        where = "/".join(issue.get("devices") or [])
        warning = " (warning)" if issue.get("severity") == "warning" else ""
        out.spans((issue["id"].ljust(id_width), STRONG), (f"  {where}", DIM), (warning, WARN))
        out.para(issue["title"], indent=2)
    out.line()
    out.line(f"{len(issues)} known issues · `inductor-doctor explain ID` for one of them", DIM)
    for err in data.get("plugin_errors") or []:
        out.line(f"note: plugin {err['entry_point']} failed to load: {err['error']}", WARN)
    return out.text()
