"""Canary scripts: self-contained upstream reproducers, run by the target interpreter.

Each script needs only the standard library plus torch (and triton or torch_xla where its issue
needs them), takes the device as its first argument, and raises or aborts when the bug is present.
`_harness.py` wraps one run and reports a single JSON line; the scripts themselves stay copyable.
"""

from pathlib import Path

CANARY_DIR = Path(__file__).resolve().parent


def script_path(name: str) -> Path:
    return CANARY_DIR / name
