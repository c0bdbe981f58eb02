"""The doctor's own bug is exit 3, never a finding about the user's machine.

A probe or a built-in rule that raises because of a mistake in the doctor (a `NameError`, a
`TypeError`, an import of its own that is gone) once became "could not run the target interpreter"
and "Python unknown · torch not installed", exit 0: a sick doctor reported a sick machine, and a
Dockerfile gate passed. Here the mistake is put into a copy of the package for real, and the user
must see the one `internal error` line and exit 3. A plugin's bug stays a finding (it is another
project's), and so does a sick environment (tests/resilience/test_reliability.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[2]


def broken_copy(tmp_path: Path, module: str, anchor: str, injected: str) -> Path:
    """The package copied, with `injected` put before the line `anchor` of `module`."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "inductor_doctor", root / "inductor_doctor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "docs", root / "docs")
    path = root / "inductor_doctor" / module
    text = path.read_text()
    assert anchor in text, f"{module} no longer has {anchor!r}: update this test"
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    path.write_text(text.replace(anchor, f"{indent}{injected}\n{anchor}", 1))
    return root


def doctor(root: Path, args: List[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "INDUCTOR_DOCTOR_CACHE_DIR": str(root / "cache"),
           "NO_COLOR": "1"}
    env.pop("INDUCTOR_DOCTOR_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "inductor_doctor", *args], capture_output=True, text=True,
                          env=env, cwd=str(root), timeout=300)


def assert_doctor_failed(result: subprocess.CompletedProcess, what: str) -> None:
    assert result.returncode == 3, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert any("internal error" in ln and what in ln and "bug in inductor-doctor" in ln for ln in lines), \
        result.stderr
    assert "Traceback" not in result.stderr
    assert "not installed" not in result.stdout  # no finding made up from the doctor's own failure


@pytest.mark.parametrize("args", [["check", "--static"], ["probe"]])
def test_a_probe_s_own_bug_is_exit_3(tmp_path: Path, args: List[str]):
    root = broken_copy(tmp_path, "probe/packages.py", "def python_info(", "")
    path = root / "inductor_doctor" / "probe" / "packages.py"
    # The probe of the target interpreter, redefined to call a name that does not exist.
    path.write_text(path.read_text() + "\n\ndef python_info(*args, **kwargs):\n    not_a_name_anywhere()\n")
    assert_doctor_failed(doctor(root, args), "not_a_name_anywhere")


def test_a_built_in_rule_s_own_bug_is_exit_3(tmp_path: Path):
    root = broken_copy(tmp_path, "kb/openmp_headers_missing.py", "    cxx = facts.cxx\n",
                       "facts.cxx.no_such_field.split()")
    result = doctor(root, ["check", "--static", "--only", "openmp-headers-missing"])
    assert_doctor_failed(result, "no_such_field")


def test_a_sick_environment_is_still_a_finding(tmp_path: Path):
    """The other side: a probe that meets a broken machine (here, a C++ compiler that is no program)
    says so in its facts, and the check ends normally."""
    bad = tmp_path / "bin" / "g++"
    bad.parent.mkdir()
    bad.write_bytes(b"\x7fELF garbage")
    bad.chmod(0o755)
    env = {**os.environ, "CXX": str(bad), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "NO_COLOR": "1"}
    result = subprocess.run([sys.executable, "-m", "inductor_doctor", "check", "--static", "--only",
                             "cxx-compiler-missing"], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    assert "internal error" not in result.stderr
