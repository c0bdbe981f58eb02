"""Run the doctor on a sick patient and check what it left behind.

Every process the doctor starts inherits its environment, so a unique `FAULT_TEST_TAG`
marks the whole tree: after the doctor exits, any live process still carrying the tag is a process
the doctor left behind (zombies excepted: reaping orphans is PID 1's job, not the doctor's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import psutil

REPO = Path(__file__).resolve().parent.parent.parent
TAG = "FAULT_TEST_TAG"  # not INDUCTOR_DOCTOR_*: the result cache keys on those


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged(tag: str) -> List[psutil.Process]:
    """Live processes whose environment carries `tag`."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get(TAG) == tag and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def is_doctor(proc: psutil.Process) -> bool:
    """The doctor itself or its gather helper (not a canary)."""
    try:
        line = " ".join(proc.cmdline())
    except (psutil.Error, OSError):
        return False
    if "target/harness.py" in line:  # a canary (its harness lives inside the package)
        return False
    return "-m inductor_doctor" in line or "inductor_doctor/__main__.py" in line or "target/gather.py" in line


def kill_tagged(tag: str) -> None:
    for proc in tagged(tag):
        try:
            proc.kill()
        except psutil.Error:
            pass


def describe(procs: Sequence[psutil.Process]) -> str:
    out = []
    for p in procs:
        try:
            out.append(f"{p.pid}: {' '.join(p.cmdline())[:200]}")
        except psutil.Error:
            out.append(str(p.pid))
    return "; ".join(out)


def doctor_env(extra: Optional[Dict[str, str]] = None, tag: Optional[str] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["COLUMNS"] = "200"
    if tag:
        env[TAG] = tag
    if extra:
        for key, value in extra.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
    return env


def run_doctor(
    args: Sequence[str],
    env: Optional[Dict[str, str]] = None,
    timeout: float = 300,
    python: str = sys.executable,
    cwd: Optional[Path] = None,
) -> subprocess.CompletedProcess:
    """`python -m inductor_doctor ARGS`; fails the test if any process of its tree survives it."""
    tag = new_tag()
    try:
        proc = subprocess.run(
            [python, "-m", "inductor_doctor", *args],
            capture_output=True,
            text=True,
            env=doctor_env(env, tag),
            timeout=timeout,
            cwd=str(cwd) if cwd else None,
            stdin=subprocess.DEVNULL,
        )
    finally:
        left = tagged(tag)
        kill_tagged(tag)
    assert not left, f"processes left behind: {describe(left)}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def new_tagged_env(extra: Optional[Dict[str, str]] = None) -> tuple[Dict[str, str], str]:
    """A doctor environment with a fresh tag, for tests that start the processes themselves."""
    tag = new_tag()
    return doctor_env(extra, tag), tag
