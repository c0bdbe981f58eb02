"""clang as Inductor's C++ compiler on Linux: mistaken for GCC, given GCC-only flags, and more.

PyTorch builds and tests Inductor's CPU backend with GCC on Linux; clang there is a path few use
and several releases break. Inductor tells compilers apart by their *name*: the `_is_gcc` of
torch 2.5 and 2.6 (read in the wheels; 2.9 has the fix) matches `(gcc|g\\+\\+)`, which `clang++`
contains, and torch 2.6 then adds `-fno-tree-loop-vectorize`, which clang rejects ("unknown
argument"), failing every CPU compile (pytorch#144601; verified with clang++-16). Earlier, the
precompiled-header check ran
`clang -v` (pytorch#119304). With torch 2.8, clang 16 and Debian's libstdc++ 12 headers, kernels
compile but fail to load with an undefined `basic_string::_M_use_local_data` (verified locally).
The rule reads torch's cpp_builder.py for the first (conclusive); the rest shows only when a real
kernel compiles, which the `--deep` canary does.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import once_installed, unpredictable, with_option
from inductor_doctor.kb._catalog import compiler_label, one, platform_is_linux, torch_source
from inductor_doctor.kb._rules import no_cxx_compiler

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

ID = "clang-on-linux"

_IS_GCC_FN = re.compile(r"def _is_gcc\(cpp_compiler: str\) -> bool:\n(?P<body>(?:[ \t]+.*\n|\n)+)")
_IS_GCC_RE = re.compile(r're\.search\(r"(?P<re>[^"]+)", cpp_compiler\)')


def treats_as_gcc(builder: str, command: str) -> Optional[bool]:
    """Whether this torch's `_is_gcc` takes `command` (a clang) for GCC; None: cannot tell."""
    m = _IS_GCC_FN.search(builder)
    if not m:
        return None
    body = m.group("body")
    if "_is_clang(" in body:
        return False
    pat = _IS_GCC_RE.search(body)
    if not pat:
        return None
    return bool(re.search(pat.group("re"), command))


def rule(facts: Facts) -> List[RuleOutcome]:
    no_compiler = no_cxx_compiler(facts)
    if no_compiler:
        return no_compiler
    cxx = facts.cxx
    if cxx.kind != "clang":
        return one(Status.NOT_APPLICABLE, f"Inductor's compiler here is {compiler_label(cxx)}, not clang")
    if platform_is_linux(facts) is False:
        return one(Status.NOT_APPLICABLE, f"{facts.python.platform}: clang is the default there")
    tv = facts.torch.version
    builder = torch_source(facts, "_inductor", "cpp_builder.py")
    if builder is None:
        return one(Status.INCONCLUSIVE, f"torch {tv} has no readable _inductor/cpp_builder.py")
    command = cxx.command or os.path.basename(cxx.path)
    as_gcc = treats_as_gcc(builder, command)
    if as_gcc and "fno-tree-loop-vectorize" in builder:
        return one(Status.AFFECTED, f"torch {tv} takes `{command}` for GCC (its name contains 'g++') and "
                   "passes -fno-tree-loop-vectorize, which clang rejects: every CPU compile fails "
                   "(pytorch#144601)", compiler=command)
    if as_gcc:
        return one(Status.LIKELY, f"torch {tv} takes `{command}` for GCC (its name contains 'g++') and "
                   "gives it GCC's options", compiler=command)
    return one(Status.OK, f"torch {tv} recognises {compiler_label(cxx)} as clang; failures that show only "
               "when a kernel builds and loads are checked by the --deep canary")


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --cxx clang++-19`: GCC cannot have it; for clang, whether torch takes it for GCC is read
    from the installed torch's cpp_builder.py, so the check where the stack is installed decides."""
    cxx = inp.cxx
    if cxx is None:
        return unpredictable("the plan names no C++ compiler (Inductor takes $CXX, else g++)",
                             with_option("--cxx COMPILER", ID))
    kind = (inp.cxx_here.kind if inp.cxx_here is not None else None) or cxx.kind
    if kind == "gcc":
        return one(Status.NOT_APPLICABLE, f"{cxx.command} is GCC, not clang", Basis.VERSION)
    if not inp.platform.startswith("linux"):
        return one(Status.NOT_APPLICABLE, f"the plan is for {inp.platform}, where clang is the default",
                   Basis.VERSION)
    what = "is clang" if kind == "clang" else "may be clang"
    return unpredictable(f"{cxx.command} {what}; whether the planned torch takes it for GCC is read from "
                         "the installed torch's _inductor/cpp_builder.py",
                         once_installed(ID, f"CXX={cxx.command}"))
