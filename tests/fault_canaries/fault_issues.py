"""The test-only known issues whose canaries misbehave: loaded as an `inductor_doctor.issues` plugin.

Every canary here needs nothing but the standard library (`needs=()`), so a fault costs a Python
start, not an `import torch`.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import List

from inductor_doctor.core.model import Canary, DeviceKind, KnownIssue, Severity, Signature, Workaround

HERE = Path(__file__).resolve().parent
PAGE = str(HERE / "README.md")


def _issue(
    name: str,
    script: str,
    title: str,
    devices=(DeviceKind.CPU,),
    signals=(),
    timeout_s: float = 60.0,
    severity: Severity = Severity.ERROR,
    signature: str = r"FAULT-SIGNATURE",
) -> KnownIssue:
    return KnownIssue(
        id=f"fault-{name}",
        title=title,
        severity=severity,
        devices=tuple(devices),
        upstream=(),
        summary=f"A test-only issue whose canary {title.lower()}.",
        signatures=(Signature(signature),),
        workarounds=(Workaround("Nothing to do: this is a test fixture", "true", "other"),),
        canary=Canary(
            str(HERE / script),
            devices=tuple(devices),
            needs=(),
            timeout_s=timeout_s,
            affected_exit_signals=tuple(signals),
        ),
        docs_page=PAGE,
    )


ISSUES: List[KnownIssue] = [
    _issue("segfault", "segfault.py", "Dies of SIGSEGV"),
    _issue("abort", "abort.py", "Aborts (SIGABRT), which is not its signature"),
    # An abort counts only with the issue's own words in what the canary printed.
    _issue("abort-is-bug", "abort.py", "Aborts (SIGABRT) with its signature", signals=(signal.SIGABRT,),
           signature=r"donor hash mismatch"),
    _issue("hang", "hang.py", "Hangs with a child and an escaped grandchild"),
    _issue("hang-too", "hang.py", "Hangs as well, for a run with two canaries in flight"),
    _issue("unreapable", "unreapable.py", "Hangs and cannot be reaped once killed (a tracer holds it)"),
    _issue("noise", "noise.py", "Prints megabytes of noise before its signature"),
    _issue("no-result", "no_result.py", "Exits without reporting a result"),
    _issue("affected", "affected.py", "Reproduces its bug"),
    _issue("warning", "affected.py", "Reproduces a silent degradation", severity=Severity.WARNING),
    _issue("clean", "clean.py", "Runs clean"),
    _issue("per-gpu", "record_device.py", "Records its device", devices=(DeviceKind.CUDA,)),
]


def issues() -> List[KnownIssue]:
    return list(ISSUES)
