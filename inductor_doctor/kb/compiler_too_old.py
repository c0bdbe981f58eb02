"""Inductor's C++ compiler is older than this torch requires (e.g. GCC 8 with torch >= 2.2.2).

Two floors, both stated by torch itself and read from its files here: its headers refuse old
compilers outright (`c10/util/C++17.h`, torch 2.2.2 to 2.11: "You're trying to build PyTorch with
a too old version of GCC. We need GCC 9 or later.", and `__clang_major__ < 9`; GCC 5 / clang 4
before; no such check from 2.12), and Inductor passes a `-std=` flag that a compiler must know
(`c++17`, GCC 7 / clang 5; `c++20` from torch 2.12.0, GCC 10 / clang 10: `_get_cpp_std_cflag` in
`_inductor/cpp_builder.py`, pytorch/pytorch#176659). Where torch's files cannot be read, and in
`plan`, the floors come from the release snapshot (`core/_data/releases.json`), which records both
for every torch release. A compiler below either floor fails every CPU compile: conclusive.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.core.plan_input import once_installed, unpredictable, with_option
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import compiler_label, one, torch_source, version_tuple
from inductor_doctor.kb._rules import no_cxx_compiler

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: The first GCC / clang release that accepts `-std=c++NN` under that name.
STD_FLAG_FLOOR = {"gcc": {"c++17": 7, "c++20": 10}, "clang": {"c++17": 5, "c++20": 10}}

_STD_DEFAULT = re.compile(r'std_num: str = "(c\+\+\d+)"')
_STD_FLAG = re.compile(r"-std=(c\+\+\d+)")
_GCC_FLOOR = re.compile(r"!defined\(__clang__\)[^#]*?__GNUC__ < (\d+)", re.S)
_CLANG_FLOOR = re.compile(r"__clang_major__ < (\d+)")


def _snapshot(facts: Facts) -> Optional[Tuple[str, Dict[str, Any]]]:
    from inductor_doctor.core.releases import torch_release

    return torch_release(facts.torch.version if facts.torch else None)


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
    found = _snapshot(facts)
    return found[1]["cxx_std"]["std"] if found else None


def header_floor(facts: Facts, kind: str) -> Optional[int]:
    """The oldest GCC/clang major release torch's own headers accept, if they set one."""
    text = torch_source(facts, "include", "c10", "util", "C++17.h")
    if text is None:
        found = _snapshot(facts)
        return found[1]["header_floor"][kind] if found else None
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


def release_floor(entry: Mapping[str, Any], kind: str) -> Tuple[int, str]:
    """(minimum major, why) for one torch release as the snapshot read it."""
    std = entry["cxx_std"]
    need, why = STD_FLAG_FLOOR[kind][std["std"]], [f"-std={std['std']} ({std['file']})"]
    hdr = entry["header_floor"][kind]
    if hdr and hdr >= need:
        need = hdr
        why.append(f"{kind} >= {hdr} in {entry['header_floor']['file']}")
    return need, ", ".join(why)


def rule(facts: Facts) -> List[RuleOutcome]:
    no_compiler = no_cxx_compiler(facts)
    if no_compiler:
        return no_compiler
    cxx = facts.cxx
    if cxx.kind not in ("gcc", "clang"):
        return one(Status.INCONCLUSIVE, f"no version floor is known for {compiler_label(cxx)}")
    v = version_tuple(cxx.version, 2)
    if v is None:
        return one(Status.INCONCLUSIVE, f"the version of {compiler_label(cxx)} is unknown")
    need, why = floor(facts, cxx.kind)
    if need is None:
        return one(Status.INCONCLUSIVE, f"torch {facts.torch.version} states no compiler floor that the "
                   "doctor can read")
    read = torch_source(facts, "include", "c10", "util", "C++17.h") is not None or torch_source(
        facts, "_inductor", "codecache.py") is not None
    basis = Basis.STATIC if read else Basis.VERSION  # else the floors came from the release snapshot
    if v[0] < need:
        return one(Status.AFFECTED, f"{compiler_label(cxx)} is older than {cxx.kind} {need}: {why}", basis,
                   minimum=need)
    return one(Status.OK, f"{compiler_label(cxx)} meets torch {facts.torch.version}'s floor "
               f"({cxx.kind} >= {need})", basis)


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --cxx g++-9 torch==2.12.0`: the compiler's major version, when its name carries it,
    against the floors the snapshot recorded for each planned torch release."""
    from inductor_doctor.core.releases import torch_release

    cxx = inp.cxx
    torch = inp.package("torch")
    if torch is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not in the plan", Basis.VERSION)]
    if cxx is None:
        return unpredictable("the plan names no C++ compiler (Inductor takes $CXX, else g++)",
                             with_option("--cxx COMPILER", "compiler-too-old"))
    kind, major, label = cxx.kind, cxx.major, f"{cxx.command} is {cxx.kind} {cxx.major}"
    here = inp.cxx_here
    if here is not None and here.kind in ("gcc", "clang") and version_tuple(here.version, 1):
        kind, major = here.kind, version_tuple(here.version, 1)[0]
        label = f"probed here: {cxx.command} is {kind} {here.version}"
    if kind not in ("gcc", "clang") or major is None:
        return unpredictable(f"cannot tell {cxx.command}'s release from its name, and it is not on this "
                             "machine to ask", once_installed("compiler-too-old", f"CXX={cxx.command}"))
    if not torch.version_known:
        return [RuleOutcome(Status.INCONCLUSIVE, f"the version of {torch.describe()} is known only once "
                            "installed", Basis.VERSION)]
    below, meets, unknown = [], [], []
    for version in torch.candidates:
        found = torch_release(version)
        if found is None:
            unknown.append(version)
            continue
        need, why = release_floor(found[1], kind)
        (below if major < need else meets).append((version, need, why, found[0]))
    if below:
        version, need, why, release = below[0]
        status = Status.AFFECTED if not meets and not unknown else Status.LIKELY
        which = f"torch {version}" + (f" (and {len(below) - 1} more planned)" if len(below) > 1 else "")
        return [RuleOutcome(status, f"{label}; {which} needs {kind} >= {need} (torch {release}: {why})",
                            Basis.VERSION)]
    if unknown:
        return [RuleOutcome(Status.INCONCLUSIVE, f"torch {', '.join(unknown[:3])} is not in the release "
                            "snapshot; run `inductor-doctor check` once installed", Basis.VERSION)]
    need = max(n for _, n, _, _ in meets)
    return [RuleOutcome(Status.OK, f"{label}, which meets the planned torch's floor ({kind} >= {need})",
                        Basis.VERSION)]


def advise(facts: Facts) -> List[Workaround]:
    """A newer compiler of the same family already on PATH (g++-12 beside an old g++) comes before
    installing one."""
    cxx = facts.cxx
    need, _ = floor(facts, cxx.kind) if cxx.kind in ("gcc", "clang") else (None, "")
    prefix = "g++-" if cxx.kind == "gcc" else "clang++-"
    newer = sorted(((int(n[len(prefix):].split(".")[0]), p) for n, p in cxx.on_path.items()
                    if n.startswith(prefix) and n[len(prefix):].split(".")[0].isdigit()), reverse=True)
    newer = [(v, p) for v, p in newer if need is not None and v >= need]
    if not newer:
        return list(ISSUE_WORKAROUNDS)
    version, path = newer[0]
    there = Workaround(f"{path} ({cxx.kind} {version}) is installed and new enough: point Inductor at it",
                       f"export CXX={path}", "env", applies={"torch": ">=2.1"})
    return list(Workaround.pick(ISSUE_WORKAROUNDS, there, drop=["apt-get install -y g++-12"]))


#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
