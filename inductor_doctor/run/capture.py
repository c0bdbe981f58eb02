"""What `run` keeps of a command's stderr while passing every byte through: bounded memory.

A failing program's diagnosis needs its head (versions, the environment a launcher prints), its
tail (the traceback) and, from the middle, the lines that look like a compile-stack error (a C++
compiler's `error:`, a Python exception, `undefined symbol`). Everything else streams past: a
program that writes gigabytes to stderr costs `HEAD + TAIL + KEPT` bytes here, never more.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` or `re` on the path of a command that succeeds
if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Any, List, Tuple

HEAD_BYTES = 256 * 1024
TAIL_BYTES = 1024 * 1024
KEPT_BYTES = 2 * 1024 * 1024
#: A line longer than this is cut where the middle is kept (a minified blob, a progress bar).
LINE_BYTES = 8 * 1024

#: Words of the compile stack's failures; a middle line with one of them is kept. Cheap on purpose:
#: one search per line, no knowledge base loaded while the command runs; compiled only once a middle
#: line is seen (`interest()`), so a command whose stderr is short never loads `re`.
INTEREST_WORDS = (
    rb"error|exception|traceback|fatal|undefined|not found|no such|cannot|failed|warning|"
    rb"torch|triton|inductor|dynamo|omp\.h|\.so\b|ptxas|nvcc|signal|killed|version"
)
_interest: Any = None


def interest() -> Any:
    """The compiled INTEREST_WORDS (case-insensitive), made on first use."""
    global _interest
    if _interest is None:
        import re

        _interest = re.compile(INTEREST_WORDS, re.IGNORECASE)
    return _interest

SKIPPED = b"\n[... %d bytes of the output not kept ...]\n"


class Capture:
    """Head, tail ring and the interesting middle lines of a byte stream, in bounded memory."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES, kept: int = KEPT_BYTES) -> None:
        self._head_max, self._tail_max, self._kept_max = head, tail, kept
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._kept: List[Tuple[int, bytes]] = []  # (offset, line) of the middle
        self._kept_bytes = 0
        self._partial = bytearray()  # the current unfinished line, cut at LINE_BYTES
        self._partial_at = 0

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        start = self.total
        self.total += len(chunk)
        if len(self.head) < self._head_max:
            self.head += chunk[: self._head_max - len(self.head)]
        self.tail += chunk
        if len(self.tail) > 2 * self._tail_max:
            del self.tail[: len(self.tail) - self._tail_max]
        if self._kept_bytes < self._kept_max:
            self._lines(chunk, start)

    def _lines(self, chunk: bytes, start: int) -> None:
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            if nl < 0:
                if not self._partial:
                    self._partial_at = start + pos
                room = LINE_BYTES - len(self._partial)
                if room > 0:
                    self._partial += chunk[pos:pos + room]
                return
            if self._partial:
                room = LINE_BYTES - len(self._partial)
                line, at = bytes(self._partial) + chunk[pos:pos + max(room, 0)], self._partial_at
                self._partial = bytearray()
            else:
                line, at = chunk[pos:min(nl, pos + LINE_BYTES)], start + pos
            self._consider(at, line)
            pos = nl + 1

    def _consider(self, at: int, line: bytes) -> None:
        if at < self._head_max or self._kept_bytes >= self._kept_max or not interest().search(line):
            return
        self._kept.append((at, line))
        self._kept_bytes += len(line) + 1

    def data(self) -> bytes:
        """The kept text in order: head, the interesting middle lines, tail; gaps are marked."""
        tail = bytes(self.tail[-self._tail_max:])
        tail_at = self.total - len(tail)
        if tail_at <= len(self.head):  # everything was kept
            return bytes(self.head) + tail[len(self.head) - tail_at:]
        out = [bytes(self.head)]
        cursor = len(self.head)
        for at, line in self._kept:
            if at >= tail_at:
                break
            if at > cursor:
                out.append(SKIPPED % (at - cursor))
            out.append(line + b"\n")
            cursor = at + len(line) + 1
        if tail_at > cursor:
            out.append(SKIPPED % (tail_at - cursor))
        out.append(tail)
        return b"".join(out)
