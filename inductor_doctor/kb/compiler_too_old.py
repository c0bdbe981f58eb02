"""Inductor's C++ compiler is older than this torch requires (e.g. GCC 8 with torch >= 2.3).

Two floors, both stated by torch itself and read from its files here: its headers refuse old
compilers outright (`c10/util/C++17.h`: "You're trying to build PyTorch with a too old version of
GCC. We need GCC 9 or later.", and `__clang_major__ < 9`), and Inductor passes a `-std=` flag
(`c++17`, `c++20` from torch 2.13) that a compiler must know (GCC 10 / clang 10 for `c++20`).
A compiler below either floor fails every CPU compile: conclusive, no canary.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.kb._catalog import compiler_label, one, torch_source, version_tuple
from inductor_doctor.kb._rules import not_installed, parse_version
from inductor_doctor.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.plan.inputs import PlanInput
    from inductor_doctor.probe.facts import Facts

#: The first GCC / clang release that accepts `-std=c++NN` under that name.
STD_FLAG_FLOOR = {"gcc": {"c++17": 7, "c++20": 10}, "clang": {"c++17": 5, "c++20": 10}}

_STD_DEFAULT = re.compile(r'std_num: str = "(c\+\+\d+)"')
_STD_FLAG = re.compile(r"-std=(c\+\+\d+)")
_GCC_FLOOR = re.compile(r"!defined\(__clang__\)[^#]*?__GNUC__ < (\d+)", re.S)
_CLANG_FLOOR = re.compile(r"__clang_major__ < (\d+)")


def cxx_standard(facts: Facts) -> Optional[str]:
    """The -std= Inductor passes on Linux, from cpp_builder.py (torch >= 2.4) or codecache.py."""
    builder = torch_source(facts, "_inductor", "cpp_builder.py")
    if builder:
        m = _STD_DEFAULT.search(builder) or _STD_FLAG.search(builder)
        if m:
            return m.group(1)
    cache = torch_source(facts, "_inductor", "codecache.py")
    m = _STD_FLAG.search(cache or "")
    if m:
        return m.group(1)
    v = parse_version(facts.torch.version if facts.torch else None)
    if v is None:
        return None
    return "c++20" if v.release[:2] >= (2, 13) else "c++17"


def header_floor(facts: Facts, kind: str) -> Optional[int]:
    """The oldest GCC/clang major release torch's own headers accept, if they set one."""
    text = torch_source(facts, "include", "c10", "util", "C++17.h")
    if not text:
        return None
    m = (_GCC_FLOOR if kind == "gcc" else _CLANG_FLOOR).search(text)
    return int(m.group(1)) if m else None


def floor(facts: Facts, kind: str) -> Tuple[Optional[int], str]:
    """(minimum major release, why) for a gcc or clang."""
    reasons, floors = [], []
    std = cxx_standard(facts)
    if std and std in STD_FLAG_FLOOR[kind]:
        floors.append(STD_FLAG_FLOOR[kind][std])
        reasons.append(f"Inductor compiles with -std={std} ({kind} >= {STD_FLAG_FLOOR[kind][std]})")
    hdr = header_floor(facts, kind)
    if hdr:
        floors.append(hdr)
        reasons.append(f"torch's headers need {kind} >= {hdr} (c10/util/C++17.h)")
    if not floors:
        return None, ""
    return max(floors), "; ".join(reasons)


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    cxx = facts.cxx
    if not cxx.path:
        return one(Status.NOT_APPLICABLE, "no C++ compiler (see cxx-compiler-missing)")
    if cxx.kind not in ("gcc", "clang"):
        return one(Status.INCONCLUSIVE, f"no version floor is known for {compiler_label(cxx)}")
    v = version_tuple(cxx.version, 2)
    if v is None:
        return one(Status.INCONCLUSIVE, f"the version of {compiler_label(cxx)} is unknown")
    need, why = floor(facts, cxx.kind)
    if need is None:
        return one(Status.INCONCLUSIVE, f"torch {facts.torch.version} states no compiler floor that the "
                   "doctor can read")
    if v[0] < need:
        return one(Status.AFFECTED, f"{compiler_label(cxx)} is older than {cxx.kind} {need}: {why}",
                   minimum=need)
    return one(Status.OK, f"{compiler_label(cxx)} meets torch {facts.torch.version}'s floor "
               f"({cxx.kind} >= {need})")


#: `plan`: the floors by torch release where no files exist yet (-std=c++20 from 2.13; the header
#: check for GCC/clang 9 from 2.2.2, pytorch/pytorch#120126), as (torch specifier, gcc, clang).
PLAN_FLOORS = ((">=2.13", 10, 10), (">=2.2.2,<2.13", 9, 9))


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --cxx g++-8 torch==2.5.1`: the compiler's major version, when its name carries it."""
    cxx = inp.cxx
    if cxx is None or inp.package("torch") is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "needs torch and --cxx in the plan", Basis.VERSION)]
    if cxx.kind not in ("gcc", "clang") or cxx.major is None:
        return [RuleOutcome(Status.INCONCLUSIVE, f"cannot tell {cxx.command}'s release from its name; run "
                            "`inductor-doctor check` where it is installed", Basis.VERSION)]
    for spec, gcc_floor, clang_floor in PLAN_FLOORS:
        need = gcc_floor if cxx.kind == "gcc" else clang_floor
        judged = inp.judge("torch", spec)
        if cxx.major < need and judged.share in ("all", "some"):
            return [RuleOutcome(judged.status, f"{cxx.command} is {cxx.kind} {cxx.major}; torch{spec} needs "
                                f"{cxx.kind} >= {need}", Basis.VERSION)]
    return [RuleOutcome(Status.OK, f"{cxx.command} ({cxx.kind} {cxx.major}) meets the planned torch's floor",
                        Basis.VERSION)]


ISSUE = KnownIssue(
    id="compiler-too-old",
    title="Inductor's C++ compiler is older than torch requires (GCC < 9, no -std=c++20)",
    severity=Severity.ERROR,
    devices=(DeviceKind.CPU,),
    upstream=("pytorch/pytorch#130815", "pytorch/pytorch#101839", "pytorch/pytorch#120126"),
    aliases=("gcc-too-old", "old-gcc", "clang-too-old"),
    summary=(
        "torch's headers reject GCC < 9 and clang < 9 (`#error \"You're trying to build PyTorch with a "
        "too old version of GCC. We need GCC 9 or later.\"`), and Inductor compiles with -std=c++17 "
        "(-std=c++20 from torch 2.13, which needs GCC 10 or clang 10). On an old distribution "
        "toolchain (CentOS 7's GCC 4.8, Debian 10's GCC 8.3) every CPU torch.compile fails with one of "
        "those errors, or with options the compiler does not know."
    ),
    signatures=(
        Signature(r"too old version of GCC\. We need GCC \d+ or later", note="c10/util/C++17.h"),
        Signature(r"unrecognized command[- ]line option '-std=c\+\+2[0a]'",
                  note="GCC < 10 with torch >= 2.13"),
        Signature(r"C\+\+17 or later compatible compiler is required", note="ATen.h / torch/all.h"),
        Signature(r"You need C\+\+17 to compile PyTorch"),
        Signature(r"expected identifier before (?:'|‘)\[(?:'|’) token\s*\n\s*\[\[(?:un)?likely\]\]",
                  note="GCC < 9 rejecting C++20 [[unlikely]] in Inductor's C++ (pytorch#130815)"),
        Signature(r"unrecognized command[- ]line option '-m(?:avx512|amx)\w*'", strength="partial",
                  note="an old GCC or binutils that does not know the ISA flags Inductor picks"),
    ),
    workarounds=(
        Workaround("Install a newer GCC and point Inductor at it (Debian/Ubuntu example)",
                   "apt-get install -y g++-12 && export CXX=g++-12", "install"),
        Workaround("RHEL/CentOS: enable a gcc-toolset and use its g++", None, "install"),
        Workaround("Or use conda-forge's compilers in the environment",
                   "conda install -c conda-forge cxx-compiler", "install"),
    ),
    rule=rule,
    predict=predict,
)
