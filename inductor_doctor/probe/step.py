"""One probe step: what a probe module declares (`STEP = Step(...)`) to join the plan (`probe.plan()`).

Apart from the package's `__init__` so that a probe module the live probe imports can declare its step
without an import loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple


@dataclass(frozen=True)
class Step:
    """One probe in the plan: `run` gets the answers it `needs` (by name) and produces `name`.

    `fallback(message, answers)` is its answer when it met a machine it did not expect (noted, never
    fatal; a mistake in the doctor's own code propagates, `_result`), from the message and the answers
    known so far; `what` names it in that note.
    """

    name: str
    needs: Tuple[str, ...]
    run: Callable[..., Any]
    fallback: Callable[[str, Dict[str, Any]], Any] = lambda m, known: None
    what: str = ""
