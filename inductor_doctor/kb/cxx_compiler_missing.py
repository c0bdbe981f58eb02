"""No working C++ compiler for Inductor's CPU backend: InvalidCxxCompiler.

Inductor compiles CPU graphs to C++ with `CXX`, else `g++` (clang++ on macOS); it keeps the first
that answers `--version` and raises `InvalidCxxCompiler` otherwise. Slim images without
build-essential, a `CXX` naming something absent, and Windows without MSVC on PATH ("Compiler: cl
is not found") all fail every CPU compile. The probe mirrors that search and builds a trivial
shared object (conclusive); the canary asks torch itself and builds and loads a kernel with
Inductor's own flags, which also catches a compiler that rejects them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.core.plan_input import once_installed, probed_here, unpredictable, with_option
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import compiler_label, compiler_missing, one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

ID = "cxx-compiler-missing"


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    cxx = facts.cxx
    if compiler_missing(cxx):
        asked = f"CXX={cxx.command}" if cxx.chosen_by == "CXX" else f"`{cxx.command or 'g++'}`"
        broken = ", ".join(f"`{c}`" for c in cxx.does_not_run)
        what = f"{asked}: found, but does not answer `--version` (fails or hangs): {broken}" if broken \
            else f"{asked} is not found"
        return one(Status.AFFECTED, f"{what}: Inductor raises InvalidCxxCompiler for every "
                   "CPU graph" + (f" ({cxx.error})" if cxx.error and "not found" not in cxx.error else ""))
    if cxx.works is False:
        return one(Status.AFFECTED, f"Inductor's C++ compiler {compiler_label(cxx)} cannot build a shared "
                   f"object: {cxx.error or 'unknown error'}")
    if cxx.works is None:
        return one(Status.INCONCLUSIVE, "Inductor's C++ compiler was not probed")
    return one(Status.OK, f"Inductor compiles with {compiler_label(cxx)}")


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --cxx COMPILER`: whether the named compiler builds a shared object, asked of it when it
    is on this machine (`plan/here.py`); one that is not here is decided where the stack is installed."""
    cxx = inp.cxx
    if cxx is None:
        return unpredictable("the plan names no C++ compiler (Inductor takes $CXX, else g++)",
                             with_option("--cxx COMPILER", ID))
    here = inp.cxx_here
    if here is None:
        return unpredictable(f"{cxx.command} is not on this machine to probe",
                             once_installed(ID, f"CXX={cxx.command}"))
    if here.works:
        return probed_here(one(Status.OK, f"probed here: Inductor compiles with {compiler_label(here)}"))
    return probed_here(one(Status.AFFECTED, f"probed here: {compiler_label(here)} cannot build a shared "
                           f"object: {here.error or 'unknown error'}"))


def advise(facts: Facts) -> List[Workaround]:
    """A compiler that is installed before installing one: with CXX naming one that is not there (or
    does not run), or a PATH that does not reach /usr/bin/g++, while g++ is installed, the first
    thing to do is to point CXX at it; "apt-get install g++" would say it is there already."""
    cxx = facts.cxx
    bad = {cxx.command, *(cxx.does_not_run or ())}
    there = [(n, p) for n, p in cxx.on_path.items() if n not in bad and p not in bad]
    usual = "/usr/bin/g++"  # installed, but PATH (cron, a stripped environment) does not reach it
    if not there and usual not in bad and os.path.isfile(usual) and os.access(usual, os.X_OK):
        there.append(("g++", usual))
    order = ("g++", "c++", "clang++")  # Inductor's default first, then the generic names
    there.sort(key=lambda np: (order.index(np[0]) if np[0] in order else len(order), np[0]))
    first: List[Workaround] = []
    drop: List[str] = []
    if there:
        name, path = there[0]
        told = f"CXX={cxx.command} does not work" if cxx.chosen_by == "CXX" else \
            f"Inductor looks for `{cxx.command or 'g++'}`"
        first.append(Workaround(f"{told}; {name} is installed ({path}): point Inductor at it",
                                f"export CXX={path}", "env", applies={"torch": ">=2.1"}))
        drop += ["apt-get install -y g++", "export CXX=/usr/bin/g++"]
    else:
        drop.append("export CXX=/usr/bin/g++")
    if not facts.python.platform.startswith("win"):
        drop.append("x64 Native Tools Command Prompt")
    return list(Workaround.pick(ISSUE_WORKAROUNDS, *first, drop=drop))


#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
