"""Shared test fixtures: run the real CLI in a subprocess, find the cached heavy venvs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
ENVS = Path(os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests"))


def run_cli(
    args: List[str],
    env: Optional[Dict[str, str]] = None,
    input: Optional[str] = None,
    timeout: float = 600,
    python: str = sys.executable,
    cwd: Optional[Path] = None,
) -> subprocess.CompletedProcess:
    """`python -m inductor_doctor ARGS` as a user runs it, with a private result cache."""
    full_env = dict(os.environ)
    cache_root = Path(os.environ.get("PYTEST_TMP_CACHE", "/tmp"))
    full_env.setdefault("INDUCTOR_DOCTOR_CACHE_DIR", str(cache_root / "indoc-test-cache"))
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [python, "-m", "inductor_doctor", *args],
        capture_output=True,
        text=True,
        input=input,
        env=full_env,
        timeout=timeout,
        cwd=str(cwd) if cwd else None,
    )


def run_json(args: List[str], **kw) -> dict:
    proc = run_cli([*args, "--format", "json"], **kw)
    assert proc.stdout.strip(), f"no JSON on stdout; rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def venv_python(name: str) -> str:
    """The interpreter of a cached test venv; skip (or fail in CI) when it was not built."""
    py = ENVS / name / "bin" / "python"
    if not (ENVS / name / ".ready").exists():
        msg = f"test venv {name} missing: run tests/envs/build.sh {name}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return str(py)


def which_or_skip(cmd: str) -> str:
    path = shutil.which(cmd)
    if not path:
        if os.environ.get("CI"):
            pytest.fail(f"{cmd} not installed; .ci/run installs it")
        pytest.skip(f"{cmd} not installed")
    return path


def has_cuda() -> bool:
    return shutil.which("nvidia-smi") is not None and Path("/proc/driver/nvidia/version").exists()


@pytest.fixture(scope="session")
def cli():
    return run_cli
