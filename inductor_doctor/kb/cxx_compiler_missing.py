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

from inductor_doctor.core.model import (
    Canary,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
from inductor_doctor.kb._catalog import compiler_label, compiler_missing, one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


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


#: The issue's workarounds as written; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = (
    Workaround("Install a C++ compiler (Debian/Ubuntu)", "apt-get install -y g++", "install"),
    Workaround("Or point Inductor at one that exists", "export CXX=/usr/bin/g++", "env",
               applies={"torch": ">=2.1"}),
    Workaround("torch 2.0 does not read CXX: name the compiler in code before the first compile, "
               "e.g. torch._inductor.config.cpp.cxx = (\"/usr/bin/g++\",)", None, "code",
               applies={"torch": "<2.1"}),
    Workaround("On Windows, run from a 'x64 Native Tools Command Prompt for VS' so that cl.exe is on "
               "PATH", None, "other"),
    Workaround("Where conda is available, let Inductor install g++ into its cache itself",
               "export TORCH_INDUCTOR_INSTALL_GXX=1", "env"),
)


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


ISSUE = KnownIssue(
    id="cxx-compiler-missing",
    title="No working C++ compiler for Inductor's CPU backend (InvalidCxxCompiler)",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=(
        "pytorch/pytorch#92745",
        "pytorch/pytorch#157458",
        "pytorch/pytorch#132533",
        "pytorch/pytorch#149310",
    ),
    aliases=("InvalidCxxCompiler", "no-cxx", "no-working-cxx-compiler", "cl-not-found"),
    summary=(
        "torch.compile on CPU generates C++ and builds it with `CXX`, else `g++` (`clang++` on macOS, "
        "`cl` on Windows). Without one on PATH, or with a CXX that does not run, every CPU compile "
        "fails with `InvalidCxxCompiler: No working C++ compiler found in "
        "torch._inductor.config.cpp.cxx: (None, 'g++')` (Windows: `Compiler: cl is not found.`). GPU "
        "compiles do not need it."
    ),
    signatures=(
        Signature(r"No working C\+\+ compiler found", note="torch._inductor.exc.InvalidCxxCompiler"),
        Signature(r"InvalidCxxCompiler", strength="partial",
                  note="the exception's name alone: also in source lines a traceback quotes"),
        Signature(r"Compiler: \S+ is not found", note="Windows: MSVC's cl.exe is not on PATH"),
    ),
    workarounds=ISSUE_WORKAROUNDS,
    rule=rule,
    advise=advise,
    canary=Canary("cxx_compiler_missing.py", devices=(DeviceKind.CPU,), timeout_s=120.0),
)
