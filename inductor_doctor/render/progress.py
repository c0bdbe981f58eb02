"""What `check`, `report` and `fix` say on stderr while they work, terminal or not.

At a terminal, a live display shows the phase (probing, then canaries) from the first moment, and
each running canary with its own elapsed time, so that a 40 s canary visibly lives. Piped or
redirected (a CI log, `check --format json | jq`), a live display would be escape codes in a file,
and saying nothing left a run that takes 20 s after the machine changed looking hung: there, once
the work has taken `QUIET_S` seconds, one plain line per stage goes to stderr (`LineProgress`), and a
run that ends sooner says nothing. stdout, where the document goes, is never touched.
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


#: A run shorter than this says nothing when stderr is not a terminal.
QUIET_S = 2.0
#: What starts each line: the doctor's name, as its other lines on stderr.
PREFIX = "inductor-doctor: "
#: Within a long stage (canaries of a minute each, `import torch` on a cold disk), a line at most
#: this often: as a canary ends, or that the stage still runs.
HEARTBEAT_S = 10.0


class LineProgress(Progress):
    """One plain line per stage on a stream that is not a terminal, once the work has lasted
    `quiet_s` (counted from the first stage: a usage error before any work says only itself):
    `inductor-doctor: probing the toolchain … 3s`; in a stage that goes on, a line every
    `heartbeat_s` (a canary that ended, or "still")."""

    def __init__(self, stream: Any, quiet_s: float = QUIET_S, heartbeat_s: float = HEARTBEAT_S) -> None:
        self._stream = stream
        self._quiet_s = quiet_s
        self._heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._started: Optional[float] = None
        self._phase: Optional[str] = None
        self._said: Optional[str] = None  # the stage last said
        self._last_line = 0.0  # when a line was last written
        self._timer: Optional[threading.Thread] = None
        self._done = 0
        self._total: Optional[int] = None

    def _say(self) -> None:
        """The current stage, if it was not said yet and the quiet time is over (the lock held)."""
        if self._phase is None or self._phase == self._said or self._started is None:
            return
        elapsed = time.monotonic() - self._started
        if elapsed < self._quiet_s:
            return
        self._said = self._phase
        self._write(self._phase, elapsed)

    def _write(self, text: str, elapsed: float) -> None:
        self._last_line = elapsed
        try:
            self._stream.write(f"{PREFIX}{text} … {elapsed:.0f}s\n")
            self._stream.flush()
        except (OSError, ValueError):  # a closed pipe: progress is not worth failing for
            pass

    def _watch(self) -> None:
        """The quiet time, then the stage; then a line whenever one has not been written for a while."""
        if self._stop.wait(self._quiet_s):
            return
        with self._lock:
            self._say()
        while not self._stop.wait(1.0):
            with self._lock:
                elapsed = time.monotonic() - (self._started or 0.0)
                if self._phase is not None and elapsed - self._last_line >= self._heartbeat_s:
                    self._write(f"{self._phase} (still)", elapsed)

    def phase(self, name: str) -> None:
        with self._lock:
            self._phase = name
            if self._started is None:
                self._started = time.monotonic()
                self._timer = threading.Thread(target=self._watch, daemon=True, name="indoc-progress")
                self._timer.start()
            self._say()

    def planned(self, count: int) -> None:
        self._total = count
        self.phase(f"running {count} canar{'y' if count == 1 else 'ies'}" if count else "static checks")

    def finished(self, key: str, status: str) -> None:
        """A canary ended: within a long stage, a line now and then (`HEARTBEAT_S`) says how far it is."""
        with self._lock:
            self._done += 1
            if self._started is None or self._said != self._phase or self._total is None:
                return
            elapsed = time.monotonic() - self._started
            if elapsed - self._last_line >= self._heartbeat_s:
                self._write(f"{self._phase}: {self._done}/{self._total} done, {key} {status}", elapsed)

    def close(self) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join(timeout=2.0)


@contextmanager
def progress_display(enabled: bool = True) -> Iterator[Progress]:
    """A live display while the block runs when stderr is a terminal; one line per stage when it is
    not, for a run longer than `QUIET_S`; nothing with `enabled=False` (`--quiet`)."""
    if not enabled:
        yield Progress()
        return
    if not _is_tty(sys.stderr):
        lines = LineProgress(sys.stderr)
        try:
            yield lines
        finally:
            lines.close()
        return
    display = LiveProgress()
    with display._live:
        yield display


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
