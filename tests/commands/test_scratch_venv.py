"""The doctor's scratch venv: made outside the user's environment, used, and gone afterwards.

Real venvs, a real pip (this machine's configuration: its local indexes), the real `check`.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from inductor_doctor.scratch.venv import PREFIX, ScratchError, ScratchVenv


def test_install_check_and_remove(tmp_path: Path):
    before = set(os.listdir(tmp_path))
    with ScratchVenv.create(parent=str(tmp_path)) as venv:
        root = venv.root
        assert root.name.startswith(PREFIX) and stat.S_IMODE(root.stat().st_mode) == 0o700
        assert venv.python.exists() and str(venv.python) != sys.executable
        done = venv.install(["packaging"])
        assert done.ok, done.why()
        said = venv.run_python(["-c", "import sys, packaging; print(sys.prefix)"])
        assert said.ok and said.stdout.strip() == str(venv.prefix)
        run = venv.check(["--static", "--only", "torch-missing"])
        assert run.document is not None, run.error
        assert run.document["environment"]["python"]["executable"].startswith(str(venv.prefix))
        rows = {r["id"]: r for r in run.document["results"]}
        assert "torch is not installed" in rows["torch-missing"]["reason"], "the venv's own truth"
        assert str(venv.python) in rows["torch-missing"]["reason"]
    assert not root.exists()
    assert set(os.listdir(tmp_path)) == before


def test_a_failed_install_is_a_result_and_keep_keeps(tmp_path: Path):
    venv = ScratchVenv.create(parent=str(tmp_path), keep=True)
    try:
        done = venv.install(["inductor-doctor-no-such-package==0.0.1"], options=["--no-index"])
        assert not done.ok and done.why(), "a failed install is a result with its reason"
        venv.__exit__(None, None, None)
        assert venv.root.exists(), "--keep keeps the venv"
    finally:
        assert venv.remove(force=True)


def test_a_venv_that_cannot_be_made_is_one_line(tmp_path: Path):
    with pytest.raises(ScratchError) as err:
        ScratchVenv.create(base_python="/bin/false", parent=str(tmp_path))
    assert "\n" not in str(err.value)
    assert os.listdir(tmp_path) == [], "nothing left behind"
