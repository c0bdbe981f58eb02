"""The one colour table and console of every text renderer: colour only for a person at a terminal.

`NO_COLOR` (no-color.org) and `TERM=dumb` turn colour off, `FORCE_COLOR` on; pipes, files and CI logs
get plain text. The width follows the terminal (`COLUMNS` included), so nothing is laid out for a
screen the reader does not have.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from typing import Any, Callable, Optional

GOOD, BAD, WARN, DIM, COMMAND, STRONG = "green", "bold red", "yellow", "dim", "cyan", "bold"
#: Verdicts, worst first.
ORDER = ("affected", "likely", "inconclusive", "ok", "not-applicable")
STATUS = {
    "affected": BAD,
    "likely": WARN,
    "inconclusive": "magenta",
    "ok": GOOD,
    "not-applicable": DIM,
}
#: How sure a triage match is.
CONFIDENCE = {"exact": BAD, "partial": WARN, "possible": WARN, "version-only": DIM}


def use_color(stream: Any = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def terminal_width(default: int = 100) -> int:
    """The reader's width: the terminal's or `COLUMNS`; at least 60, at most 160."""
    return max(60, min(shutil.get_terminal_size((default, 40)).columns, 160))


def console_to_string(render: Callable[[Any], None], width: Optional[int] = None,
                      color: Optional[bool] = None) -> str:
    """Render rich objects to a string: plain text unless stdout is a colour terminal."""
    from rich.console import Console

    color = use_color() if color is None else color
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        width=width or terminal_width(),
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
    )
    render(console)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def summary_line(summary: Any) -> str:
    return ", ".join(f"{summary.get(s, 0)} {s}" for s in ORDER)


def hanging(console: Any, marker: str, text: str, indent: int = 0, style: str = "") -> None:
    """`marker text` whose wrapped lines align under the text, not under the marker. A command
    (`$`) is never wrapped: it stands whole on its own line at any width, to be copied; prose
    breaks between words only (`plain.wrap`), so no path, symbol or quoted command is cut."""
    from rich.text import Text

    from inductor_doctor.render.plain import wrap

    first = " " * indent + (marker + " " if marker else "")
    rest = " " * len(first)
    lines = [first + text] if marker == "$" else wrap(text, console.width, first, rest)
    for i, line in enumerate(lines):
        head = first if i == 0 else rest
        out = Text(head)
        out.append(line[len(head):], style=style)
        console.print(out, no_wrap=True, crop=False, overflow="ignore")


def paragraph(console: Any, text: str, style: str = "", indent: int = 0) -> None:
    """A paragraph that wraps under its own indent, never back to the margin, between words only."""
    hanging(console, "", text, indent, style)
