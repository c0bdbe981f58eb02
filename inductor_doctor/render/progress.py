"""The live progress display on stderr while `check` works: only for a person at a terminal.

It shows the phase (probing, then canaries) from the first moment, and each running canary with its
own elapsed time, so that a 40 s canary visibly lives.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

from inductor_doctor.core.model import Progress


class LiveProgress(Progress):
    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._phase = "probing the toolchain"
        self._running: Dict[str, float] = {}
        self._total: Optional[int] = None
        self._done = 0
        self._live = Live(get_renderable=self._render, console=Console(stderr=True), transient=True,
                          refresh_per_second=4)

    def _render(self) -> Any:
        from rich.text import Text

        now = time.monotonic()
        with self._lock:
            text = Text()
            text.append(f"{self._phase}", style="bold")
            if self._total is not None:
                text.append(f" · {self._done}/{self._total} done")
            text.append(f" · {now - self._started:.0f}s", style="dim")
            for key, since in sorted(self._running.items(), key=lambda kv: kv[1]):
                text.append(f"\n  {key} ", style="cyan")
                text.append(f"{now - since:.0f}s", style="dim")
            return text

    def phase(self, name: str) -> None:
        with self._lock:
            self._phase = name

    def planned(self, count: int) -> None:
        with self._lock:
            self._total = count
            self._phase = "running canaries" if count else "static checks"

    def started(self, key: str) -> None:
        with self._lock:
            self._running[key] = time.monotonic()

    def finished(self, key: str, status: str) -> None:
        with self._lock:
            self._running.pop(key, None)
            self._done += 1


@contextmanager
def progress_display(enabled: bool = True) -> Iterator[Progress]:
    """A live display while the block runs when stderr is a terminal; a silent `Progress` otherwise."""
    if not enabled or not _is_tty(sys.stderr):
        yield Progress()
        return
    display = LiveProgress()
    with display._live:
        yield display


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
