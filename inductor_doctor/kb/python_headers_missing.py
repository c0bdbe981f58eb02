"""The target Python has no headers: "fatal error: Python.h: No such file or directory".

Inductor's CPU kernels are loaded through a generated CPython binding, and Triton's launcher is a
CPython extension: both compile `#include <Python.h>` against `sysconfig.get_paths()["include"]`.
A distro Python without `python3-dev` (or a relocated/trimmed interpreter) has no such directory,
and every CPU and every GPU compile fails. Whether the header exists, and whether the compiler
finds it with that include path, are probed directly: conclusive, no canary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import compiler_label, one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    py = facts.python
    inc = py.include_dir or "?"
    if py.has_python_h is False:
        return one(Status.AFFECTED, f"no Python.h in {inc} (sysconfig's include dir of "
                   f"{py.executable}): Inductor's C++ and Triton's launcher cannot compile",
                   include_dir=py.include_dir)
    if py.has_python_h is None:
        return one(Status.INCONCLUSIVE, "could not tell whether the target Python has its headers")
    for info in (facts.cxx, facts.cc):
        if info.works and info.python_h is False:  # a broken compiler is another issue
            note = info.python_h_error or ""
            return one(Status.AFFECTED, f"{compiler_label(info)} cannot compile `#include <Python.h>` "
                       f"with -I{inc}" + (f" ({note})" if note else ""))
    return one(Status.OK, f"Python.h present in {inc}")


def advise(facts: Facts) -> List[Workaround]:
    """The package manager installs the headers of the system's Python only: for that Python the
    exact `pythonX.Y-dev`; for another (pyenv, conda, uv, a build of one's own) the headers come with
    that Python, and apt or dnf cannot help. Where Python.h is there and the compiler still cannot
    include it, installing it again cannot help either."""
    py = facts.python
    minor = ".".join(py.version.split(".")[:2])
    system = (py.base_prefix or py.prefix or "") in ("/usr", "/usr/local") and py.platform.startswith("linux")
    if py.has_python_h:
        return [Workaround(f"Python.h is in {py.include_dir}: the compiler is what cannot include it (its "
                           "error is in the reason); fix its flags, or use another compiler", None, "other")]
    if not system:
        where = py.base_prefix or py.prefix or py.executable
        return list(Workaround.pick(ISSUE_WORKAROUNDS, Workaround(
            f"{py.executable} is not the system's Python (it lives in {where}): its headers come with it, "
            "not from apt or dnf; reinstall that Python with its headers (pyenv install --force, "
            "conda install python, uv python install --reinstall)", None, "install"),
            drop=["apt-get install", "dnf install"]))
    exact = Workaround(f"Install the headers of Python {minor}, the one you run (Debian/Ubuntu)",
                       f"apt-get install -y python{minor}-dev", "install")
    return list(Workaround.pick(ISSUE_WORKAROUNDS, exact, drop=["apt-get install -y python3-dev"]))


#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
