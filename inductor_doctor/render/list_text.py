"""`list` as a person reads it: one line per issue, the id whole (it is what `explain` takes)."""

from __future__ import annotations

from typing import Any, Mapping

from inductor_doctor.render.style import DIM, STRONG, WARN, console_to_string, terminal_width


def render(data: Mapping[str, Any], **_: Any) -> str:
    issues = list(data.get("issues", []))
    width = terminal_width()

    def draw(console: Any) -> None:
        from rich.padding import Padding
        from rich.text import Text

        id_width = max((len(i["id"]) for i in issues), default=2)
        for issue in issues:
            line = Text()
            line.append(issue["id"].ljust(id_width), style=STRONG)
            where = "/".join(issue.get("devices") or [])
            line.append(f"  {where}", style=DIM)
            if issue.get("severity") == "warning":
                line.append(" (warning)", style=WARN)
            console.print(line, no_wrap=True, overflow="ellipsis")
            console.print(Padding(Text(issue["title"]), (0, 0, 0, 2)))
        console.print()
        console.print(Text(f"{len(issues)} known issues · `inductor-doctor explain ID` for one of them",
                           style=DIM))
        for err in data.get("plugin_errors") or []:
            note = f"note: plugin {err['entry_point']} failed to load: {err['error']}"
            console.print(Text(note, style=WARN))

    return console_to_string(draw, width=width)
