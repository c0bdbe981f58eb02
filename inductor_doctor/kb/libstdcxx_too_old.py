"""The libstdc++ loaded at run time is older than the one Inductor's compiler links against.

Inductor builds its CPU kernels with the system (or configured) g++, which links them against that
GCC's libstdc++ and stamps the symbol versions it used (`GLIBCXX_3.4.30` for GCC 12). The kernel
is then `dlopen`ed into a process that already holds a libstdc++ of its own: a conda env's, or one
bundled next to the interpreter. When that one is older, loading fails with "version
`GLIBCXX_3.4.30' not found". Whether a given kernel uses a symbol that new depends on the kernel,
so the versions only predict it (`likely`); the compiler's release is read from the probe and the
loaded library's newest GLIBCXX version from its ELF version definitions.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import compiler_label, dotted, one, version_tuple
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: The newest GLIBCXX symbol version of each GCC release's libstdc++ (the libstdc++ ABI policy
#: table: "GCC 12.1.0: GLIBCXX_3.4.30"), as (gcc major, minor) → 3.4.N.
GCC_GLIBCXX: Tuple[Tuple[Tuple[int, int], int], ...] = (
    ((5, 1), 21), ((6, 1), 22), ((7, 1), 23), ((7, 2), 24), ((8, 1), 25), ((9, 1), 26), ((9, 2), 27),
    ((9, 3), 28), ((10, 1), 28), ((11, 1), 29), ((12, 1), 30), ((13, 1), 31), ((13, 2), 32),
    ((14, 1), 33), ((15, 1), 34),
)  # fmt: skip

SYSTEM_LIB_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


def gcc_glibcxx(version: Optional[str]) -> Optional[Tuple[int, int, int]]:
    """The newest GLIBCXX version a GCC release's libstdc++ defines; None before GCC 5."""
    v = version_tuple(version, 2)
    if v is None:
        return None
    best = None
    for release, n in GCC_GLIBCXX:
        if v >= release:
            best = (3, 4, n)
    return best


def _system(path: str) -> bool:
    real = os.path.realpath(path)
    return real.startswith(tuple(d + "/" for d in SYSTEM_LIB_DIRS))


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    cxx, py = facts.cxx, facts.python
    if not cxx.works:
        return one(Status.NOT_APPLICABLE, "no working C++ compiler (see cxx-compiler-missing)")
    if py.platform and not py.platform.startswith("linux"):
        return one(Status.NOT_APPLICABLE, f"{py.platform}: GLIBCXX symbol versions are a Linux matter")
    loaded = version_tuple(py.libstdcxx_glibcxx_max)
    if loaded is None or not py.libstdcxx_path:
        return one(Status.INCONCLUSIVE, "the libstdc++ the target Python loads, or its GLIBCXX versions, "
                   "is unknown")
    lib = f"{py.libstdcxx_path} (GLIBCXX up to {dotted(loaded)})"
    if cxx.kind == "gcc":
        needs = gcc_glibcxx(cxx.version)
        if needs is None:
            return one(Status.INCONCLUSIVE, f"no GLIBCXX level is known for {compiler_label(cxx)}")
        if needs > loaded:
            return one(Status.LIKELY, f"kernels built by {compiler_label(cxx)} may need GLIBCXX_"
                       f"{dotted(needs)}, but this Python loads {lib}: loading them can fail with "
                       f"\"version `GLIBCXX_{dotted(needs)}' not found\"", Basis.VERSION,
                       compiler_glibcxx=dotted(needs), loaded_glibcxx=dotted(loaded))
        return one(Status.OK, f"{lib} is at least as new as the libstdc++ of {compiler_label(cxx)} "
                   f"(GLIBCXX_{dotted(needs)})", Basis.VERSION)
    if cxx.kind == "clang" and _system(py.libstdcxx_path):
        return one(Status.OK, f"{compiler_label(cxx)} links the system libstdc++, which is also the one "
                   f"loaded: {lib}")
    return one(Status.INCONCLUSIVE, f"which libstdc++ {compiler_label(cxx)} links is not known; this "
               f"Python loads {lib}")
