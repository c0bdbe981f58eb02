"""A user's install, for real: the checkout into a venv that has nothing, dependencies resolved from
the registry (their newest versions), then the first commands a user runs (tests/pristine.py).
`.ci/run` also runs it with every dependency at the lowest version pyproject.toml allows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]  # tests/


@pytest.mark.slow
def test_a_pristine_install_with_the_newest_dependencies_works():
    proc = subprocess.run([sys.executable, str(HERE / "pristine.py"), "newest"], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.stdout.rstrip().endswith("newest: ok")
