"""Shared test fixtures: run the real CLI in a subprocess, find the cached heavy venvs, and keep
every run's files in a root of its own.

A test run writes nothing where a user's files are: for the whole session TMPDIR, the doctor's
result cache and Inductor's and Triton's caches point into one directory under pytest's base
temporary directory, so every subprocess (the CLI, its canaries, a torch.compile a test makes)
inherits them. That directory is removed at the end; pytest keeps the temporary directories of
failed tests only, of the last run only (pyproject.toml). The session's last step measures what is
left and fails the run when a passing run left more than a little (TEMP_LEFT_MAX_MB).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
ENVS = Path(os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests"))


#: The session's own caches and TMPDIR, set for every process of the run (private_run_root).
PRIVATE_ENV_NAMES = ("TMPDIR", "INDUCTOR_DOCTOR_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR",
                     "TRITON_HOME")
#: What a passing run may leave in its temporary directories (the small module-scoped ones that
#: remain when --basetemp is given), in MB.
TEMP_LEFT_MAX_MB = 50


def _user_cache_dirs() -> List[Path]:
    """Where torch, Triton and the doctor keep a user's caches by default. The doctor's is watched
    but never fails a run: test_reliability's home-unset tests use it on purpose (HOME unset, the
    password database's home is where a user's cache goes)."""
    user = os.environ.get("USER") or str(os.getuid())
    try:
        import getpass

        user = getpass.getuser()
    except (ImportError, KeyError, OSError):
        pass
    home = Path.home()
    return [Path(tempfile.gettempdir()) / f"torchinductor_{user}", home / ".triton",
            home / ".cache" / "torch", home / ".cache" / "inductor-doctor"]


def _newest_mtime(path: Path) -> float:
    newest = 0.0
    for top, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            try:
                newest = max(newest, os.lstat(os.path.join(top, name)).st_mtime)
            except OSError:
                pass
    return newest


def _size_mb(path: Path) -> float:
    total = 0
    for top, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                pass
    return total / 2**20


@pytest.fixture(scope="session", autouse=True)
def private_run_root(tmp_path_factory, request) -> Iterator[Path]:
    """One directory for everything this run writes outside its tests' tmp_path: TMPDIR, the
    doctor's result cache, Inductor's and Triton's caches (TRITON_HOME for ~/.triton). Set in this
    process's environment, so every subprocess inherits them; removed at the end of the session."""
    root = tmp_path_factory.getbasetemp() / "run"
    values = {
        "TMPDIR": root / "tmp",
        "INDUCTOR_DOCTOR_CACHE_DIR": root / "doctor-cache",
        "TORCHINDUCTOR_CACHE_DIR": root / "torchinductor",
        "TRITON_CACHE_DIR": root / "triton" / "cache",
        "TRITON_HOME": root / "triton",
    }
    saved = {name: os.environ.get(name) for name in PRIVATE_ENV_NAMES}
    saved_tempdir = tempfile.tempdir
    for path in values.values():
        path.mkdir(parents=True, exist_ok=True)
    request.config.stash[_USER_CACHES_KEY] = {p: _newest_mtime(p) for p in _user_cache_dirs()}
    os.environ.update({name: str(path) for name, path in values.items()})
    tempfile.tempdir = str(values["TMPDIR"])
    yield root
    tempfile.tempdir = saved_tempdir
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(root, ignore_errors=True)


_USER_CACHES_KEY = pytest.StashKey[Dict[Path, float]]()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    """What the run left: its temporary directories (after pytest's own clean-up, which runs first),
    and any change to a user's own caches. A passing run that left more fails."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    problems = []
    left = _size_mb(basetemp) if basetemp is not None and basetemp.exists() else 0.0
    if left > TEMP_LEFT_MAX_MB:
        problems.append(f"{left:.0f} MB left in {basetemp} (at most {TEMP_LEFT_MAX_MB} MB)")
    if basetemp is not None and (basetemp / "run").exists():
        problems.append(f"the run's private root {basetemp / 'run'} was not removed")
    before = session.config.stash.get(_USER_CACHES_KEY, {})
    started = getattr(session.config, "_indoc_started", time.time())
    touched = [p for p, mtime in before.items() if _newest_mtime(p) > max(mtime, started)]
    for path in touched:  # in CI nothing else runs beside the tests; elsewhere another process may
        strict = os.environ.get("CI") and path.name != "inductor-doctor"
        problems.append(f"a user's cache changed during the run: {path}"
                        + ("" if strict else " (reported, not failed)"))
    lines = [f"temporary files left by this run: {left:.1f} MB in {basetemp}"] if basetemp else []
    session.config.stash[_LEFT_KEY] = lines + [f"LEFT BEHIND: {p}" for p in problems]
    failing = [p for p in problems if not p.endswith("(reported, not failed)")]
    if failing and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_LEFT_KEY = pytest.StashKey[List[str]]()


def pytest_terminal_summary(terminalreporter, config) -> None:
    for line in config.stash.get(_LEFT_KEY, []):
        terminalreporter.write_line(line, red=line.startswith("LEFT"))


def pytest_configure(config) -> None:
    config._indoc_started = time.time()


def run_cli(
    args: List[str],
    env: Optional[Dict[str, Optional[str]]] = None,
    input: Optional[str] = None,
    timeout: float = 600,
    python: str = sys.executable,
    cwd: Optional[Path] = None,
) -> subprocess.CompletedProcess:
    """`python -m inductor_doctor ARGS` as a user runs it, with the run's private caches (a value
    of None in `env` unsets that variable)."""
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    return subprocess.run(
        [python, "-m", "inductor_doctor", *args],
        capture_output=True,
        text=True,
        input=input,
        env=full_env,
        timeout=timeout,
        cwd=str(cwd) if cwd else None,
    )


def this_python_site_dirs() -> List[str]:
    """The site-packages of the interpreter running the tests: a venv's own when they run in one
    (where torch and the doctor were installed), the base interpreter's otherwise."""
    import site

    return [d for d in dict.fromkeys(site.getsitepackages()) if os.path.isdir(d)]


def see_this_python(site_packages: Path) -> None:
    """Make another interpreter's `site_packages` see this one's, .pth files (editable installs)
    included, as `--system-site-packages` does for the base interpreter's."""
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in this_python_site_dirs())
    (site_packages / "_indoc_tests_this_python.pth").write_text(lines)


def venv_seeing_this_python(path: Path) -> str:
    """A fresh venv, without pip, that sees what the interpreter running the tests has installed:
    `--system-site-packages` would see the base interpreter's instead, which in a venv has neither
    torch nor the doctor. Returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = str(path / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    see_this_python(Path(purelib))
    return python


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
