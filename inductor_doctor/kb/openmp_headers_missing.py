"""The C++ compiler cannot use OpenMP: "fatal error: 'omp.h' file not found".

Inductor's CPU kernels are parallelised with OpenMP: every compile passes `-fopenmp` and the
generated code includes `omp.h`. GCC ships both (libgomp); clang needs the separate LLVM OpenMP
runtime (Debian `libomp-<N>-dev`, Homebrew `libomp`), so `CXX=clang++` on Linux without it, and
Apple clang on macOS, fail every CPU compile. The probe compiles `#include <omp.h>` with
`-fopenmp` using Inductor's compiler: conclusive, no canary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.kb._catalog import compiler_label, compiler_major, one
from inductor_doctor.kb._rules import not_installed
from inductor_doctor.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.probe.facts import Facts


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
        hint = f"; install libomp-{major}-dev" if major else "; install the LLVM OpenMP runtime (libomp)"
    return one(Status.AFFECTED, f"{compiler_label(cxx)} cannot compile `#include <omp.h>` with -fopenmp"
               + (f" ({detail})" if detail else "") + hint, compiler=cxx.path, error=detail)


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
    workarounds=(
        Workaround("Use GCC for Inductor (it ships OpenMP)", "export CXX=g++", "env"),
        Workaround("Or install the LLVM OpenMP runtime of your clang's own major version (Debian/Ubuntu: "
                   "libomp-dev is the distribution's default LLVM, 14 on bookworm, whose omp.h clang 16 or "
                   "19 does not search)",
                   'apt-get install -y "libomp-$(${CXX:-clang++} -dumpversion | cut -d. -f1)-dev"',
                   "install"),
        Workaround("macOS: install libomp", "brew install libomp", "install"),
    ),
    rule=rule,
)
