"""Paragraphs, hanging bullets and one-line rows, wrapped to the reader's width, without rich.

The short commands (`list`, `explain`) print only this kind of text: laying it out by hand costs
nothing to import, where rich costs tens of milliseconds before the first character. Colour uses the
same style names as `style.py` (`"bold red"`), as ANSI codes, and only when `style.use_color()` says.
"""

from __future__ import annotations

import textwrap
from typing import List

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}


class Writer:
    def __init__(self, width: int, color: bool) -> None:
        self.width = width
        self.color = color
        self._lines: List[str] = []

    def _paint(self, text: str, style: str) -> str:
        codes = ";".join(_CODES[w] for w in style.split() if w in _CODES)
        return f"\x1b[{codes}m{text}\x1b[0m" if self.color and codes and text else text

    def line(self, text: str = "", style: str = "") -> None:
        """One line as it is (ids, commands): never wrapped, never cut."""
        self._lines.append(self._paint(text, style))

    def spans(self, *parts: tuple[str, str]) -> None:
        """One line of differently styled parts: (text, style) pairs."""
        self._lines.append("".join(self._paint(t, s) for t, s in parts))

    def para(self, text: str, style: str = "", indent: int = 0) -> None:
        """A paragraph that wraps under its own indent, never back to the margin."""
        self.hanging("", text, indent, style)

    def hanging(self, marker: str, text: str, indent: int = 0, style: str = "") -> None:
        """`marker text`, wrapped lines aligned under the text, not under the marker."""
        first = " " * indent + (marker + " " if marker else "")
        rest = " " * len(first)
        wrapped = textwrap.wrap(text, width=max(20, self.width), initial_indent=first, subsequent_indent=rest,
                                break_long_words=False, break_on_hyphens=False) or [first]
        for i, ln in enumerate(wrapped):
            head = first if i == 0 else rest
            self._lines.append(head + self._paint(ln[len(head):], style))

    def text(self) -> str:
        return "\n".join(ln.rstrip() for ln in self._lines) + "\n"
