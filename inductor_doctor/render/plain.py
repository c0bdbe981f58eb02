"""Paragraphs, hanging bullets and one-line rows, wrapped to the reader's width, without rich.

The short commands (`list`, `explain`) print only this kind of text: laying it out by hand costs
nothing to import, where rich costs tens of milliseconds before the first character. Colour uses the
same style names as `style.py` (`"bold red"`), as ANSI codes, and only when `style.use_color()` says.
"""

from __future__ import annotations

import re
from typing import List, Optional


def _tokens(text: str) -> List[str]:
    """Words, with a `quoted command` kept as one word (its spaces as single spaces)."""
    out: List[str] = []
    open_span = False
    for word in text.split():
        if open_span:
            out[-1] += " " + word
        else:
            out.append(word)
        if word.count("`") % 2:
            open_span = not open_span
    return out


def wrap(text: str, width: int, first: str = "", rest: Optional[str] = None) -> List[str]:
    """`text` as lines of at most `width` characters, broken between words only: a command in
    backquotes, a path, a mangled symbol or a URL is never cut; one longer than the line stands
    alone on its own line. A long comma-separated list without spaces (a hostlist, GPU indices)
    may break after a comma, which cuts no name."""
    rest = first if rest is None else rest
    lines: List[str] = []
    line = first
    empty = True
    for token in _tokens(text):
        room = width - len(line) - (0 if empty else 1)
        if len(token) <= room:
            line += token if empty else " " + token
            empty = False
            continue
        if not empty:  # the next line, whole, where it fits there
            lines.append(line)
            line, empty = rest, True
        if len(token) > width - len(line) and "`" not in token and "," in token.rstrip(","):
            for piece in re.findall(r"[^,]*,|[^,]+$", token):  # longer than any line: after commas
                if not empty and len(piece) > width - len(line):
                    lines.append(line)
                    line, empty = rest, True
                line += piece
                empty = False
            continue
        line += token
        empty = False
    if not empty or not lines:
        lines.append(line)
    return lines


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
        """`marker text`, wrapped lines aligned under the text, not under the marker; a command
        (`$`) is never wrapped: it stands whole on its own line, to be copied."""
        first = " " * indent + (marker + " " if marker else "")
        rest = " " * len(first)
        if marker == "$":
            lines = [first + text]
        else:
            lines = wrap(text, max(20, self.width), first, rest)
        for i, ln in enumerate(lines):
            head = first if i == 0 else rest
            self._lines.append(head + self._paint(ln[len(head):], style))

    def text(self) -> str:
        return "\n".join(ln.rstrip() for ln in self._lines) + "\n"
