"""The harness's endings, as the engine reads them: what a canary's SystemExit says reaches the verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_doctor.target import harness

MARKER = harness.MARKER


def ending(tmp_path: Path, body: str) -> dict:
    script = tmp_path / "canary.py"
    script.write_text(body)
    proc = subprocess.run([sys.executable, harness.__file__, str(script), "cpu"], capture_output=True,
                          text=True, timeout=60)
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARKER)]
    return json.loads(line[len(MARKER):])


@pytest.mark.parametrize("body,expected", [
    ("pass\n", {"status": "ok"}),
    ("raise SystemExit('OK: clean with X=0 as set here')\n",
     {"status": "ok", "message": "clean with X=0 as set here"}),
    ("raise SystemExit('SKIP: no GPU')\n", {"status": "skip", "message": "no GPU"}),
    ("raise SystemExit('PARTIAL: imports only')\n", {"status": "ok", "exercised": "partial",
                                                     "message": "imports only"}),
    ("raise SystemExit('boom')\n", {"status": "error", "exc_type": "SystemExit", "message": "boom"}),
])
def test_each_ending(tmp_path: Path, body: str, expected: dict):
    got = ending(tmp_path, body)
    got.pop("duration_s")
    assert got.pop("proof") == {}, "nothing imported torch, nothing was compiled: no proof"
    assert got == expected
