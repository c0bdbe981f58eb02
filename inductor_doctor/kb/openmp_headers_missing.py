"""The C++ compiler cannot use OpenMP: "fatal error: 'omp.h' file not found".

Inductor's CPU kernels are parallelised with OpenMP: every compile passes `-fopenmp` and the
generated code includes `omp.h`. GCC ships both (libgomp); clang needs the separate LLVM OpenMP
runtime (Debian `libomp-<N>-dev`, Homebrew `libomp`), so `CXX=clang++` on Linux without it, and
Apple clang on macOS, fail every CPU compile. The probe compiles `#include <omp.h>` with
`-fopenmp` using Inductor's compiler: conclusive, no canary.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.core.plan_input import once_installed, probed_here, unpredictable, with_option
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import compiler_label, compiler_major, one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import CompilerInfo, Facts
    from inductor_doctor.core.plan_input import PlanInput

ID = "openmp-headers-missing"


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    return judged(facts.cxx)


def judged(cxx: CompilerInfo, probed: str = "") -> List[RuleOutcome]:
    """The verdict of a probed compiler's OpenMP (`check`'s, and `plan`'s for a `--cxx` that is here,
    whose reason then starts with `probed`)."""
    if not cxx.works:
        return one(Status.NOT_APPLICABLE,
                   f"{probed}no working C++ compiler to test (see cxx-compiler-missing)")
    if cxx.openmp is None:
        return one(Status.INCONCLUSIVE, f"OpenMP support of {compiler_label(cxx)} was not probed")
    if cxx.openmp:
        return one(Status.OK, f"{probed}{compiler_label(cxx)} compiles `#include <omp.h>` with -fopenmp")
    detail = cxx.openmp_error or ""
    hint = ""
    if cxx.kind == "clang":
        major = compiler_major(cxx)
        mine = [h for h in cxx.omp_headers if major and f"/llvm-{major}/" in h]
        if mine:  # the cause is where this clang looks, not what is installed
            hint = f"; libomp-{major}-dev is installed ({mine[0]}), but this clang does not search there"
        else:
            hint = f"; install libomp-{major}-dev" if major else "; install the LLVM OpenMP runtime (libomp)"
    return one(Status.AFFECTED, f"{probed}{compiler_label(cxx)} cannot compile `#include <omp.h>` with "
               "-fopenmp" + (f" ({detail})" if detail else "") + hint, compiler=cxx.path, error=detail)


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --cxx clang++-19`: the named compiler's OpenMP, probed when it is on this machine
    (`plan/here.py`, as `check` asks it); GCC brings its own (libgomp); any other compiler that is
    not here is decided by the check where the stack is installed."""
    cxx = inp.cxx
    if cxx is None:
        return unpredictable("the plan names no C++ compiler (Inductor takes $CXX, else g++)",
                             with_option("--cxx COMPILER", ID))
    if inp.cxx_here is not None:
        return probed_here(judged(inp.cxx_here, probed="probed here: "))
    if cxx.kind == "gcc":
        return one(Status.OK, f"{cxx.command} is GCC, which brings its own OpenMP (libgomp)", Basis.VERSION)
    needs = ("clang needs the LLVM OpenMP runtime of its own major version (libomp-N-dev)"
             if cxx.kind == "clang" else "whether it finds omp.h is the machine's")
    return unpredictable(f"{cxx.command} is not on this machine to probe, and {needs}",
                         once_installed(ID, f"CXX={cxx.command}"))


def advise(facts: Facts) -> List[Workaround]:
    """What can help where this compiler finds no omp.h: a compiler that is there and has OpenMP
    before installing anything; never "install libomp-N-dev" when it is installed (this clang does
    not search where it went), never GCC where there is no g++, never Homebrew off macOS."""
    cxx = facts.cxx
    first: List[Workaround] = []
    drop: List[str] = []
    major = compiler_major(cxx) if cxx.kind == "clang" else None
    mine = [h for h in cxx.omp_headers if major and f"/llvm-{major}/" in h]
    if mine:  # libomp-N-dev is installed: this clang does not look where it put omp.h
        drop.append('apt-get install -y "libomp-')
        same = cxx.on_path.get(f"clang++-{major}")
        if same and os.path.realpath(same) != os.path.realpath(cxx.path or ""):
            first.append(Workaround(f"libomp-{major}-dev is installed ({mine[0]}), but {cxx.path} does not "
                                    f"search there; {same} does", f"export CXX={same}", "env"))
        else:
            first.append(Workaround(f"libomp-{major}-dev is installed ({mine[0]}), but {cxx.path} does not "
                                    "search there: add its directory to the compiler's include path",
                                    f"export CPATH={os.path.dirname(mine[0])}", "env"))
    for name, path in cxx.on_path.items():  # another clang whose own OpenMP headers are installed
        m = re.match(r"clang\+\+-(\d+)$", name)
        if m and m.group(1) != str(major) and any(f"/llvm-{m.group(1)}/" in h for h in cxx.omp_headers):
            first.append(Workaround(f"{name} is installed and has its OpenMP headers", f"export CXX={path}",
                                    "env"))
            break
    if "g++" not in cxx.on_path:
        drop.append("export CXX=g++")
    if not facts.python.platform.startswith("darwin"):
        drop.append("brew install libomp")
    gxx = [w for w in ISSUE_WORKAROUNDS if w.command == "export CXX=g++" and "g++" in cxx.on_path]
    return list(Workaround.pick(ISSUE_WORKAROUNDS, *first, *gxx, drop=drop))


#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
