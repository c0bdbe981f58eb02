"""A throw-away virtual environment the doctor owns: install something, try it, remove it.

The doctor never changes the user's environment. When it must prove something by installing it
(`plan --suggest --verify`: does the suggested torch work here? `why --versions`: does another
torch release make the failure go away?), it installs into a venv of its own, in a fresh private
temporary directory (0700, outside any environment of the user's), runs the doctor's `check` there
through `--python`, and deletes the directory afterwards unless asked to keep it.

    from inductor_doctor.scratch.venv import ScratchVenv, ScratchError

    with ScratchVenv.create(keep=False) as venv:         # python -m venv, pip included
        done = venv.install(["torch==2.13.0"], index_url="https://download.pytorch.org/whl/cpu")
        if not done.ok:
            print(done.why())                            # one line: pip's own error
        report = venv.check(["--static"])                # CheckRun: .returncode, .document (JSON)
    # removed here (venv.root no longer exists), unless keep=True

Every process runs in its own session with a deadline and is killed whole on timeout
(`probe/_proc.run`); nothing here raises for what the installed packages do: a failed install is
a result. `ScratchError` is raised only when the venv itself cannot be made (no `venv` module, a
full disk), with one line saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from inductor_doctor.probe._proc import ProcResult, run

#: The prefix of every scratch directory, so that a user can see (and remove) what the doctor made.
PREFIX = "inductor-doctor-venv-"
CREATE_TIMEOUT_S = 180.0
INSTALL_TIMEOUT_S = 1800.0
CHECK_TIMEOUT_S = 900.0


class ScratchError(Exception):
    """The scratch venv could not be made or used; the message is one line for the user."""


@dataclass
class CheckRun:
    """`inductor-doctor check --python <venv> --format json` in the scratch venv."""

    argv: List[str]
    returncode: Optional[int]
    document: Optional[Dict[str, Any]]  # the JSON report; None when check printed none
    error: Optional[str] = None  # why there is no document (timed out, not JSON)
    duration_s: float = 0.0


@dataclass
class ScratchVenv:
    """A venv in a private temporary directory the doctor made; `remove()` deletes all of it."""

    root: Path  # the temporary directory (the venv is root/"venv")
    base_python: str  # the interpreter the venv was made from
    keep: bool = False
    installed: List[str] = field(default_factory=list)  # requirements installed so far
    log: List[ProcResult] = field(default_factory=list)  # every command run, in order

    @property
    def prefix(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        """The venv's interpreter (what `check --python` is pointed at)."""
        return self.prefix / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    @classmethod
    def create(cls, base_python: Optional[str] = None, *, keep: bool = False, with_pip: bool = True,
               system_site_packages: bool = False, timeout_s: float = CREATE_TIMEOUT_S,
               parent: Optional[str] = None) -> ScratchVenv:
        """Make the venv from `base_python` (default: the doctor's own interpreter) in a new private
        temporary directory under `parent` (default: the system's temporary directory)."""
        base = base_python or sys.executable
        try:
            root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        except OSError as exc:
            raise ScratchError(f"cannot make a scratch directory: {exc.strerror or exc}") from None
        venv = cls(root=root, base_python=base, keep=keep)
        argv = [base, "-m", "venv"] + ([] if with_pip else ["--without-pip"])
        argv += (["--system-site-packages"] if system_site_packages else []) + [str(venv.prefix)]
        made = venv._run(argv, timeout_s)
        if not made.ok or not venv.python.exists():
            venv.remove(force=True)
            raise ScratchError(f"cannot make a venv with {base}: {made.why()}")
        return venv

    def _run(self, argv: Sequence[str], timeout_s: float,
             env: Optional[Mapping[str, str]] = None) -> ProcResult:
        result = run(argv, timeout_s=timeout_s, env=env, cwd=str(self.root))
        self.log.append(result)
        return result

    def pip_argv(self, requirements: Sequence[str], index_url: Optional[str] = None,
                 extra_index_urls: Sequence[str] = (), options: Sequence[str] = ()) -> List[str]:
        """The `pip install` command line `install` runs (for showing it before running it)."""
        argv = [str(self.python), "-m", "pip", "install", "--disable-pip-version-check"]
        if index_url:
            argv += ["--index-url", index_url]
        for url in extra_index_urls:
            argv += ["--extra-index-url", url]
        return argv + list(options) + list(requirements)

    def install(self, requirements: Sequence[str], index_url: Optional[str] = None,
                extra_index_urls: Sequence[str] = (), options: Sequence[str] = (),
                timeout_s: float = INSTALL_TIMEOUT_S, env: Optional[Mapping[str, str]] = None) -> ProcResult:
        """`pip install` into the venv, pip's own configuration (find-links, certificates) applying
        as it would for the user; a failure is returned (`.ok`, `.why()`), never raised."""
        result = self._run(self.pip_argv(requirements, index_url, extra_index_urls, options), timeout_s,
                           env=_clean_env(env))
        if result.ok:
            self.installed.extend(requirements)
        return result

    def run_python(self, args: Sequence[str], timeout_s: float = 120.0,
                   env: Optional[Mapping[str, str]] = None) -> ProcResult:
        """The venv's interpreter with `args` (`["-c", "import torch"]`)."""
        return self._run([str(self.python), *args], timeout_s, env=_clean_env(env))

    def check(self, args: Sequence[str] = (), timeout_s: float = CHECK_TIMEOUT_S,
              doctor_python: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> CheckRun:
        """The doctor's `check` of the venv: run by the doctor's own interpreter with
        `--python <venv>` (the doctor need not be installed in the venv), JSON to stdout."""
        argv = [doctor_python or sys.executable, "-m", "inductor_doctor", "check",
                "--python", str(self.python), "--format", "json", *args]
        start = time.monotonic()
        result = self._run(argv, timeout_s, env=_doctor_env(env))
        took = time.monotonic() - start
        if result.timed_out or result.error:
            return CheckRun(argv, result.returncode, None, result.why(), took)
        try:
            doc = json.loads(result.stdout)
        except ValueError:
            why = f"check printed no JSON report: {result.why()}"
            return CheckRun(argv, result.returncode, None, why, took)
        return CheckRun(argv, result.returncode, doc if isinstance(doc, dict) else None, None, took)

    def remove(self, force: bool = False) -> bool:
        """Delete the scratch directory (unless `keep`, or `force`); True when it is gone."""
        if self.keep and not force:
            return False
        shutil.rmtree(self.root, ignore_errors=True)
        return not self.root.exists()

    def __enter__(self) -> ScratchVenv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _clean_env(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """The user's environment for the venv's processes, minus what would point them elsewhere
    (another venv's activation, a PYTHONPATH that would shadow what was installed)."""
    out = dict(os.environ if env is None else env)
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_USER", "CONDA_PREFIX"):
        out.pop(name, None)
    return out


def _doctor_env(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """The doctor's own environment: its PYTHONPATH kept (a checkout run from source), its output
    plain (JSON parsed here)."""
    out = dict(os.environ if env is None else env)
    out.pop("VIRTUAL_ENV", None)
    out["NO_COLOR"] = "1"
    return out
