"""The C++ compiler a plan names, probed on this machine when it is here, as `check` would ask it.

`plan torch==2.13.0 --cxx clang++-19` names a compiler; its name says clang 19, and nothing about
whether it finds OpenMP's headers or builds a shared object at all. When that compiler is on this
machine, the plan need not guess: the same three tiny compiles `check` runs (`probe/compiler.py`:
a shared object, `#include <omp.h>` with -fopenmp) answer for it, and the issues that depend on
the compiler (openmp-headers-missing, cxx-compiler-missing, compiler-too-old) read the answer from
`PlanInput.cxx_here`. A compiler that is not here is left to the issue's check where the stack is
installed ("cannot be predicted", and that command). The probe's answers are remembered per binary
(`probe/_diskcache.py`), so a second plan costs nothing.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

from inductor_doctor.core.facts import CompilerInfo
from inductor_doctor.core.plan_input import Compiler


def probe_named(cxx: Optional[Compiler], env: Optional[Mapping[str, str]] = None) -> Optional[CompilerInfo]:
    """What the named compiler compiles here, or None when the plan names none or it is not here."""
    if cxx is None:
        return None
    from inductor_doctor.probe.compiler import cxx_on_path, omp_headers, probe_compiler, resolve

    env = env if env is not None else os.environ
    if resolve(cxx.command, env) is None:
        return None
    info = probe_compiler(cxx.command, "--cxx", "c++", None, True, env)
    info.on_path = cxx_on_path(env)
    info.omp_headers = omp_headers()
    return info
