"""The live progress display on stderr while canaries run (only on a terminal)."""

from __future__ import annotations

import threading
from typing import Any, Dict

from rich.console import Console
from rich.live import Live
from rich.text import Text

from inductor_doctor.engine import Progress
from inductor_doctor.runner import CanaryJob, CanaryRun


class CanaryProgress:
    def __init__(self) -> None:
        self._console = Console(stderr=True)
        self._lock = threading.Lock()
        self._running: Dict[str, float] = {}
        self._total = 0
        self._done = 0
        self._live = Live(self._render(), console=self._console, transient=True, refresh_per_second=4)

    def _render(self) -> Text:
        names = ", ".join(sorted(self._running)) or "-"
        return Text.from_markup(
            f"[bold]canaries[/] {self._done}/{self._total} done · running: [cyan]{names}[/]"
        )

    def _update(self) -> None:
        self._live.update(self._render())

    def on_plan(self, n: int) -> None:
        with self._lock:
            self._total = n
            self._update()

    def on_start(self, job: CanaryJob) -> None:
        with self._lock:
            self._running[job.key] = 0.0
            self._update()

    def on_done(self, run: CanaryRun) -> None:
        with self._lock:
            self._running.pop(run.job.key, None)
            self._done += 1
            self._update()

    def callbacks(self) -> Progress:
        return Progress(on_start=self.on_start, on_done=self.on_done, on_plan=self.on_plan)

    def __enter__(self) -> CanaryProgress:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._live.__exit__(*exc)
