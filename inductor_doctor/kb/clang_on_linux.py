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
from inductor_doctor.kb._catalog import compiler_label, one, platform_is_linux, torch_source
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

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
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    cxx = facts.cxx
    if not cxx.path:
        return one(Status.NOT_APPLICABLE, "no C++ compiler (see cxx-compiler-missing)")
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


ISSUE = KnownIssue(
    id="clang-on-linux",
    title="clang as Inductor's compiler on Linux: GCC-only flags ('-fno-tree-loop-vectorize'), link errors",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=("pytorch/pytorch#119304", "pytorch/pytorch#144601"),
    aliases=("clang-linux", "cxx-clang", "fno-tree-loop-vectorize", "_M_use_local_data"),
    summary=(
        "Inductor's CPU backend is built and tested with GCC on Linux. With CXX=clang++ several "
        "releases fail: torch 2.6 (up to the fix, in 2.9 at the latest) takes `clang++` for GCC by its "
        "name and passes "
        "-fno-tree-loop-vectorize (`clang: error: unknown argument: '-fno-tree-loop-vectorize'`); older "
        "ones ran `clang -v` to detect GCC for precompiled headers; torch 2.8 kernels built by clang 16 "
        "against libstdc++ 12 headers fail to load with an undefined "
        "`std::__cxx11::basic_string<...>::_M_use_local_data()`. clang also needs the LLVM OpenMP "
        "headers (see openmp-headers-missing)."
    ),
    signatures=(
        Signature(r"unknown argument: '-fno-tree-loop-vectorize'", note="clang given GCC's flag"),
        Signature(r"undefined symbol: _ZNSt7__cxx1112basic_string\w*_M_use_local_dataEv",
                  note="clang 16 with libstdc++ 12 headers, torch 2.8"),
        Signature(r"_M_use_local_data", strength="partial"),
        Signature(r"check_compiler_is_gcc", strength="partial", note="torch <= 2.2 precompiled-header check",
                  subject=("self",)),
        Signature(r"clang[^\n]{0,80}(?:does not support|doesn't support|unknown argument|unsupported)"
                  r"[^\n]{0,40}tree-loop-vectorize", strength="partial", subject=("self",),
                  note="GCC's flag named as clang's problem in prose (pytorch#144601)"),
    ),
    workarounds=(
        Workaround("Use GCC for Inductor on Linux (what PyTorch tests)", "export CXX=g++", "env",
                   applies={"torch": ">=2.1"}),
        Workaround("torch 2.0 does not read CXX: name the compiler in code before the first compile, "
                   "e.g. torch._inductor.config.cpp.cxx = (\"g++\",)", None, "code",
                   applies={"torch": "<2.1"}),
        Workaround("Or upgrade torch to a release whose cpp_builder recognises clang (2.9 and later)",
                   'pip install -U "torch>=2.9"', "upgrade"),
    ),
    rule=rule,
    canary=Canary("clang_on_linux.py", devices=(DeviceKind.CPU,), timeout_s=300.0, deep=True),
)
