"""`why --versions`: the failing command again with other torch releases, in the doctor's scratch venvs.

Is the failure fixed in a newer torch, or new in this one? The command is re-run with the newest
final torch release (from the release snapshot, `core/releases.py`), and with the newest patch of the
minor release before the installed one, each installed into its own scratch venv
(`inductor_doctor/scratch/venv.py`: a private temporary directory, removed afterwards) made from the
command's own interpreter with its site-packages visible, so the program's other packages are there
and only torch (and what pip needs to go with it) differs. The build variant is kept: a `+cpu` torch
is compared with `+cpu` wheels from PyTorch's CPU index, a `+cu124` one with that index's.

Only a command that starts with a Python interpreter (`python repro.py`) can be re-run this way: the
scratch venv's interpreter takes its place. Nothing of the user's environment is changed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import List, Optional, Sequence, Tuple

# pip's reason for a failed install, shared with `plan --suggest --verify`
from inductor_doctor.scratch.pip_reason import pip_error  # noqa: F401

PYTORCH_INDEX = "https://download.pytorch.org/whl/"
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def interpreter_of(argv: Sequence[str], path_var: Optional[str]) -> Optional[str]:
    """The Python interpreter the command starts with, resolved as the shell would; None otherwise."""
    if not argv or not _PYTHON.match(os.path.basename(argv[0])):
        return None
    found = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=path_var)
    return found if found and os.access(found, os.X_OK) else None


def command_python(argv: Sequence[str], path_var: Optional[str]) -> Optional[str]:
    """The interpreter whose torch the command uses: the one it starts with, else `python3` (or
    `python`) on the command's PATH (a `torchrun` or a shell script runs that one)."""
    found = interpreter_of(argv, path_var)
    if found:
        return found
    for name in ("python3", "python"):
        found = shutil.which(name, path=path_var)
        if found:
            return found
    return None


def torch_version(interpreter: str) -> Optional[str]:
    """The interpreter's installed torch, from its metadata (torch is not imported)."""
    code = "import importlib.metadata as m; print(m.version('torch'))"
    try:
        proc = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def candidates(installed: str, releases: Sequence[str]) -> List[Tuple[str, str]]:
    """(release, why it is tried): the newest final release when it is newer than the installed one,
    and the newest patch of the minor release before it."""
    from packaging.version import Version

    mine = Version(installed.split("+")[0])
    final = sorted((Version(r) for r in releases if not Version(r).is_prerelease), reverse=True)
    out: List[Tuple[str, str]] = []
    if final and final[0] > mine:
        out.append((str(final[0]), "newest"))
    older = [v for v in final if (v.major, v.minor) < (mine.major, mine.minor)]
    if older:
        out.append((str(older[0]), "previous"))
    return out


def index_for(installed: str) -> Optional[str]:
    """PyTorch's index for the installed build's variant (`+cpu`, `+cu124`); None: PyPI's default."""
    local = installed.partition("+")[2]
    if re.fullmatch(r"cpu|cu\d+|rocm[\d.]+|xpu", local):
        return PYTORCH_INDEX + local
    return None


def requirement(release: str, installed: str) -> str:
    local = installed.partition("+")[2]
    return f"torch=={release}+{local}" if index_for(installed) else f"torch=={release}"


def site_dirs(interpreter: str) -> List[str]:
    """The interpreter's own site-packages directories. A venv made from a venv's interpreter sees the
    base interpreter's site-packages, not the venv's, with `--system-site-packages`: the scratch venv
    is given these by a `.pth` file instead, after its own (so its torch comes first)."""
    code = ("import site, sysconfig; p = sysconfig.get_paths(); "
            "print('\\n'.join(dict.fromkeys([p['purelib'], p['platlib'], *site.getsitepackages()])))")
    try:
        proc = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line for line in proc.stdout.splitlines() if line and os.path.isdir(line)]


def see_site_dirs(venv_python: str, dirs: Sequence[str]) -> Optional[str]:
    """Write the `.pth` that makes `dirs` visible to the scratch venv; None, or why not."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    try:
        proc = subprocess.run([venv_python, "-c", code], capture_output=True, text=True, timeout=60,
                              check=False)
        purelib = proc.stdout.strip()
        with open(os.path.join(purelib, "_inductor_doctor_command_site.pth"), "w", encoding="utf-8") as fh:
            fh.write("".join(d + "\n" for d in dirs))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not show the command's site-packages to the scratch venv: {exc}"
    return None


def pip_line(req: str, index: Optional[str]) -> str:
    return f"pip install '{req}'" + (f" --index-url {index}" if index else "")
