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

from inductor_doctor.core.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
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


_PYTHON_LOAD = r"ImportError|OSError|required by [^)\n]*\.so\b"
_PYTHON_LOAD_SAYS = "a Python import of a compiled module (an ImportError, or a .so that needs it)"

ISSUE = KnownIssue(
    id="libstdcxx-too-old",
    title="Loaded libstdc++ older than the compiler's: \"version `GLIBCXX_3.4.30' not found\"",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=("pytorch/pytorch#137826", "pytorch/pytorch#87279", "pytorch/pytorch#157709"),
    aliases=("glibcxx", "GLIBCXX-not-found", "cxxabi-not-found"),
    summary=(
        "Inductor's CPU kernels are built with the system g++ and linked against its libstdc++, then "
        "loaded into a process that already holds another libstdc++: a conda env's, or one bundled with "
        "the interpreter. If that one is older, the kernel fails to load with `ImportError: ... "
        "libstdc++.so.6: version `GLIBCXX_3.4.30' not found` (or `CXXABI_1.3.x`). It also hits kernels "
        "cached by a newer compiler and reused elsewhere."
    ),
    signatures=(
        # A standalone program or build tool (cmake, a C++ binary) that needs a newer libstdc++
        # prints the same (pytorch#3147, MBoemo/DNAscent#4): a Python import of a compiled module is this.
        Signature(r"version `?'?GLIBCXX_3\.4\.\d+'? not found",
                  note="a symbol version the loaded libstdc++ lacks",
                  anchor=_PYTHON_LOAD, anchor_lines=0, anchor_says=_PYTHON_LOAD_SAYS),
        Signature(r"version `?'?CXXABI_1\.3\.\d+'? not found",
                  anchor=_PYTHON_LOAD, anchor_lines=0, anchor_says=_PYTHON_LOAD_SAYS),
    ),
    workarounds=(
        Workaround("In a conda env, install a libstdc++ at least as new as the system compiler's",
                   "conda install -c conda-forge 'libstdcxx-ng>=12'", "install"),
        Workaround("Or preload the system libstdc++ ahead of the env's",
                   "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "env"),
        Workaround("Or build with the env's own compiler, which matches its libstdc++",
                   "conda install -c conda-forge cxx-compiler && "
                   "export CXX=\"$CONDA_PREFIX/bin/x86_64-conda-linux-gnu-c++\"",
                   "install"),
        Workaround("Clear the kernels cached by another toolchain, in the directory torch itself uses (it "
                   "follows TORCHINDUCTOR_CACHE_DIR, TMPDIR and getpass.getuser(), not $USER, which "
                   "containers often leave unset)",
                   "d=\"$(python -c 'from torch._inductor.codecache import cache_dir; print(cache_dir())')\" "
                   "&& rm -rf -- \"$d\"", "other"),
    ),
    rule=rule,
)
