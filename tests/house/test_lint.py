"""The house style is enforced, not hoped for: `ruff check` over the whole tree is clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    cmd = [ruff] if ruff else [sys.executable, "-m", "ruff"]
    proc = subprocess.run([*cmd, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0 and "No module named ruff" in proc.stderr:
        pytest.fail("ruff is part of the test extra: run `bash tests/setup.sh`")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
