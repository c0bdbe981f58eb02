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

from inductor_doctor.core.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
from inductor_doctor.kb._catalog import compiler_label, compiler_major, one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    cxx = facts.cxx
    if not cxx.works:
        return one(Status.NOT_APPLICABLE, "no working C++ compiler to test (see cxx-compiler-missing)")
    if cxx.openmp is None:
        return one(Status.INCONCLUSIVE, f"OpenMP support of {compiler_label(cxx)} was not probed")
    if cxx.openmp:
        return one(Status.OK, f"{compiler_label(cxx)} compiles `#include <omp.h>` with -fopenmp")
    detail = cxx.openmp_error or ""
    hint = ""
    if cxx.kind == "clang":
        major = compiler_major(cxx)
        mine = [h for h in cxx.omp_headers if major and f"/llvm-{major}/" in h]
        if mine:  # the cause is where this clang looks, not what is installed
            hint = f"; libomp-{major}-dev is installed ({mine[0]}), but this clang does not search there"
        else:
            hint = f"; install libomp-{major}-dev" if major else "; install the LLVM OpenMP runtime (libomp)"
    return one(Status.AFFECTED, f"{compiler_label(cxx)} cannot compile `#include <omp.h>` with -fopenmp"
               + (f" ({detail})" if detail else "") + hint, compiler=cxx.path, error=detail)


#: The issue's workarounds as written; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = (
    Workaround("Use GCC for Inductor (it ships OpenMP)", "export CXX=g++", "env"),
    Workaround("Or install the LLVM OpenMP runtime of your clang's own major version (Debian/Ubuntu: "
               "libomp-dev is the distribution's default LLVM, 14 on bookworm, whose omp.h clang 16 or "
               "19 does not search)",
               'apt-get install -y "libomp-$(${CXX:-clang++} -dumpversion | cut -d. -f1)-dev"',
               "install"),
    Workaround("macOS: install libomp", "brew install libomp", "install"),
)


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


ISSUE = KnownIssue(
    id="openmp-headers-missing",
    title="Inductor's C++ compiler has no OpenMP: \"'omp.h' file not found\"",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=(
        "pytorch/pytorch#95708",
        "pytorch/pytorch#125243",
        "pytorch/pytorch#122705",
        "pytorch/pytorch#107111",
    ),
    aliases=("omp-h", "libomp", "openmp"),
    summary=(
        "Every CPU kernel Inductor generates is compiled with -fopenmp and includes omp.h. GCC brings "
        "its own OpenMP (libgomp); clang does not: with CXX=clang++ on Linux and no `libomp-<N>-dev`, or "
        "with Apple clang on macOS and no Homebrew libomp, every CPU torch.compile fails with `fatal "
        "error: 'omp.h' file not found`. A second OpenMP runtime in the process shows as `OMP: Error "
        "#15 ... libomp.dylib already initialized`."
    ),
    signatures=(
        Signature(r"'omp\.h' file not found", note="clang without the LLVM OpenMP headers"),
        Signature(r"omp\.h: No such file or directory", note="gcc wording"),
        Signature(r"unsupported option '-fopenmp'", note="Apple clang"),
        Signature(r"OMP: Error #15", strength="partial",
                  note="two OpenMP runtimes loaded (macOS, conda): a related symptom"),
    ),
    workarounds=ISSUE_WORKAROUNDS,
    rule=rule,
    advise=advise,
)
