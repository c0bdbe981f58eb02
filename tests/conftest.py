"""Shared test fixtures: run the real CLI in a subprocess, find the cached heavy venvs, and keep
every run's files in a root of its own.

A test run writes nothing where a user's files are: for the whole session TMPDIR (where Inductor's
cache is by default), the doctor's result cache and TRITON_HOME (where Triton's is) point into one
directory under pytest's base temporary directory, so every subprocess (the CLI, its canaries, a
torch.compile a test makes) inherits them. That directory is removed at the end; pytest keeps the
temporary directories of failed tests only, of the last run only (pyproject.toml). The session's
last step measures what is left and fails the run when a passing run left more than a little
(TEMP_LEFT_MAX_MB).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
ENVS = Path(os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests"))


#: The session's own caches and TMPDIR, set for every process of the run (private_run_root).
PRIVATE_ENV_NAMES = ("TMPDIR", "INDUCTOR_DOCTOR_CACHE_DIR", "TRITON_HOME")
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


_RUN_ROOT: Optional[Path] = None


def run_dir(name: str) -> Path:
    """A directory of its own in the run's private root (removed at the end of the session)."""
    path = (_RUN_ROOT or Path(tempfile.gettempdir())) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


_USER_CACHES_KEY = pytest.StashKey[Dict[Path, float]]()
_SAVED_KEY = pytest.StashKey[Dict[str, Optional[str]]]()
_LEFT_KEY = pytest.StashKey[List[str]]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config) -> None:
    """One directory for everything this run writes outside its tests' tmp_path: TMPDIR, the
    doctor's result cache, and TRITON_HOME. Inductor's cache is by default under TMPDIR
    (`torchinductor_<user>`) and Triton's under TRITON_HOME (`.triton/cache`), so both are the run's
    own while TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR stay unset: the doctor sees the default
    configuration a user has. Set in this process's environment before collection, so that modules
    which copy os.environ when imported copy these too, and every subprocess inherits them;
    removed at the end of the session."""
    config._indoc_started = time.time()
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:
        return
    global _RUN_ROOT
    # Under pytest-xdist each worker is a session of its own with a root of its own (its basetemp
    # is the controller's plus popen-gwN): two workers never share the doctor's cache or its last
    # report, which tests of `fix`, `preflight` and the result cache read. The controller alone
    # watches the user's caches.
    root = _RUN_ROOT = factory.getbasetemp() / "run"
    values = {
        "TMPDIR": root / "tmp",
        "INDUCTOR_DOCTOR_CACHE_DIR": root / "doctor-cache",
        "TRITON_HOME": root / "triton",
    }
    for path in values.values():
        path.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        config.stash[_USER_CACHES_KEY] = {p: _newest_mtime(p) for p in _user_cache_dirs()}
    config.stash[_SAVED_KEY] = {name: os.environ.get(name) for name in PRIVATE_ENV_NAMES}
    config._indoc_saved_tempdir = tempfile.tempdir
    os.environ.update({name: str(path) for name, path in values.items()})
    tempfile.tempdir = str(values["TMPDIR"])


def _restore(config) -> None:
    """This process's environment as it was; the run's private root removed."""
    saved = config.stash.get(_SAVED_KEY, None)
    if saved is None:
        return
    tempfile.tempdir = getattr(config, "_indoc_saved_tempdir", None)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    del config.stash[_SAVED_KEY]
    factory = getattr(config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is not None:
        shutil.rmtree(basetemp / "run", ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    """What the run left: its temporary directories (after pytest's own clean-up, which runs first,
    and the removal of the run's private root), and any change to a user's own caches. A passing
    run that left more fails."""
    _restore(session.config)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller measures what every worker left, once they have all finished
    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    problems = []
    left = _size_mb(basetemp) if basetemp is not None and basetemp.exists() else 0.0
    if left > TEMP_LEFT_MAX_MB:
        problems.append(f"{left:.0f} MB left in {basetemp} (at most {TEMP_LEFT_MAX_MB} MB)")
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


def pytest_collection_modifyitems(config, items) -> None:
    """`heavy` tests (minutes of real compiles, installs or builds) run only where the marker expression
    names them (`-m heavy`, .ci/run's heavy stage), never in a run that selects no marker (the README's
    command excludes only `envs` and `container`)."""
    if "heavy" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="heavy: minutes of real compiles or installs; run with -m heavy")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)


def pytest_unconfigure(config) -> None:
    _restore(config)  # a session that never finished (a usage error) still leaves nothing


def pytest_addoption(parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N tests that used the most CPU (the test's process and every "
                     "child it waited for: the CLI, its canaries, the compilers), which the machine's "
                     "load does not inflate as it does wall time")


_CPU_KEY = pytest.StashKey[Dict[str, float]]()


def _cpu_seconds() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    if item.config.getoption("--cpu-durations") is not None:
        item._indoc_cpu_start = _cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield  # the teardown's own report is made after this: it carries the figure
    start = getattr(item, "_indoc_cpu_start", None)
    if start is not None:
        item.user_properties.append(("cpu_s", round(_cpu_seconds() - start, 2)))


def pytest_runtest_logreport(report) -> None:
    """Collects each test's CPU seconds (from its worker too, under xdist: user_properties travel)."""
    if report.when != "teardown":
        return
    for name, value in getattr(report, "user_properties", ()):
        if name == "cpu_s":
            config = _CONFIG
            if config is not None:
                config.stash.setdefault(_CPU_KEY, {})[report.nodeid] = value


_CONFIG = None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    global _CONFIG
    _CONFIG = session.config


def pytest_terminal_summary(terminalreporter, config) -> None:
    for line in config.stash.get(_LEFT_KEY, []):
        terminalreporter.write_line(line, red=line.startswith("LEFT"))
    count = config.getoption("--cpu-durations")
    cpu = config.stash.get(_CPU_KEY, {})
    if count is not None and cpu:
        terminalreporter.write_sep("=", f"CPU seconds: {sum(cpu.values()):.0f} in all, the {count} largest")
        for nodeid, seconds in sorted(cpu.items(), key=lambda kv: -kv[1])[:count]:
            terminalreporter.write_line(f"{seconds:8.1f}  {nodeid}")


def sigint_as_a_terminal_leaves_it() -> None:
    """`preexec_fn` for a process a test will interrupt with SIGINT: its default disposition, as a
    terminal starts a program. A job runner that starts the tests in the background (`cmd &`,
    `nohup`) leaves SIGINT ignored, an ignored signal is inherited across exec, and a doctor that
    leaves an ignored SIGINT alone is right: the test sets the disposition it tests."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


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


SEE_THIS_PYTHON = "_indoc_tests_this_python.pth"


def see_this_python(site_packages: Path) -> None:
    """Make another interpreter's `site_packages` see this one's, .pth files (editable installs)
    included, as `--system-site-packages` does for the base interpreter's. Written atomically and
    only when it changes: several test workers may ask at once."""
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in this_python_site_dirs())
    target = site_packages / SEE_THIS_PYTHON
    if target.exists() and target.read_text() == lines:
        return
    part = target.with_name(f"{target.name}.{os.getpid()}")
    part.write_text(lines)
    os.replace(part, target)


def still_see_this_python(venv: Path) -> None:
    """A cached venv that sees the tests' interpreter was made by an earlier run, whose interpreter
    (a pristine venv of its own, since removed) may not be this one: point it at this one again, or
    it sees no torch at all."""
    for pth in venv.glob(f"lib/python*/site-packages/{SEE_THIS_PYTHON}"):
        see_this_python(pth.parent)


def venv_seeing_this_python(path: Path) -> str:
    """A fresh venv, without pip, that sees what the interpreter running the tests has installed:
    `--system-site-packages` would see the base interpreter's instead, which in a venv has neither
    torch nor the doctor. Returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = str(path / "bin" / "python")
    see_this_python(purelib_of(python))
    return python


def purelib_of(python: str) -> Path:
    """Where `python` installs pure-Python packages (its site-packages)."""
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True,
                               timeout=60).stdout.strip())


def run_json(args: List[str], **kw) -> dict:
    proc = run_cli([*args, "--format", "json"], **kw)
    assert proc.stdout.strip(), f"no JSON on stdout; rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def venv_python(name: str, builder: str = "build.sh") -> str:
    """The interpreter of a cached test venv; skip (or fail in CI) when it was not built."""
    py = ENVS / name / "bin" / "python"
    if not (ENVS / name / ".ready").exists():
        msg = f"test venv {name} missing: run tests/envs/{builder} {name}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    still_see_this_python(ENVS / name)
    return str(py)


def local_torch_index(version: str = "2.13.0") -> Dict[str, str]:
    """A local index of its own for a test that installs torch: the wheels of torch `version` and
    everything it needs, downloaded once into the test cache by pip as this machine reaches them
    (a registry, a mirror, local disk), and the environment that makes a pip the doctor starts take
    them from there alone (`PIP_NO_INDEX`, `PIP_FIND_LINKS`), so the test does not depend on which
    index this machine's pip can reach. Skips (fails in CI) when they cannot be fetched."""
    house = ENVS / f"wheelhouse-torch-{version}"
    if not (house / ".ready").exists():
        house.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                               "--only-binary=:all:", "-d", str(house), f"torch=={version}"],
                              capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            why = (proc.stderr.strip().splitlines() or ["pip download failed"])[-1]
            msg = f"needs torch {version} and its dependencies from a registry or mirror once: {why}"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)
        (house / ".ready").touch()
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house)}


#: A progress line on a stderr that is not a terminal (render/progress.py: `LineProgress`).
PROGRESS_LINE = re.compile(r"^inductor-doctor: .+ … \d+s$")


def without_progress(stderr: str) -> List[str]:
    """The lines of stderr that are not progress lines (a run over two seconds says its stages)."""
    return [ln for ln in stderr.strip().splitlines() if not PROGRESS_LINE.match(ln)]


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
