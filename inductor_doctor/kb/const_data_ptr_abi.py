"""clang >= 18 mangles `TensorBase::const_data_ptr<T>` differently from the GCC-built libtorch.

The evidence is gathered by `inductor_doctor.probe.abi` (a one-line TU compiled with the user's
compiler and flags, its undefined symbols looked up in libtorch_cpu.so), so the rule only reads
`facts.abi` and decides (`judge`): it is conclusive either way, per compiler, and needs no torch
import and no canary.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.kb._builtin import issue_data

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import AbiInfo, Facts
    from inductor_doctor.core.plan_input import PlanInput

#: torch releases whose `ATen/core/TensorBase.h` declares `const_data_ptr<T>` with an `enable_if`
#: non-type template parameter: 2.3.0 through 2.11.0 (`std::is_const<T>::value` in 2.3, `is_const_v`
#: from 2.4); 2.1-2.2 and 2.12+ declare a plain `template <typename T>`, 2.0 no typed accessor at
#: all. Read from every wheel by the release audit; `tools/release_audit.py check` holds it to that.
#: The data file's `affected` range.
AFFECTED_TORCH = issue_data(__name__)["affected"]["torch"]
FIRST_CLANG_WITH_NEW_MANGLING = 18

_ABI_COMPAT = re.compile(r"^-fclang-abi-compat=(\d+)")


def rule(facts: Facts) -> List[RuleOutcome]:
    """The verdict on what the ABI probe found, as the toolchain finding."""
    abi = facts.abi
    status, reason = judge(abi)
    if status is None:
        return [RuleOutcome(Status.INCONCLUSIVE, "the const_data_ptr ABI probe did not run",
                            Basis.STATIC, device="toolchain")]
    details = {
        "compiler": abi.compiler,
        "compiler_version": abi.compiler_version,
        "flags": list(abi.flags),
        "referenced": list(abi.referenced),
        "missing": list(abi.missing),
        "exported_spelling": abi.exported_spelling,
        "library": abi.library,
    }
    if status is Status.AFFECTED and "-fclang-abi-compat" in facts.env.get("CXXFLAGS", "") \
            and "-fclang-abi-compat" not in facts.env.get("CFLAGS", ""):
        reason += ("; CXXFLAGS holds -fclang-abi-compat, but an extension build passes CXXFLAGS to the "
                   "linker only: put it in CFLAGS")
    return [RuleOutcome(status, reason, Basis.STATIC, device="toolchain", details=details)]


#: Where the probe stopped short: the verdict, and the reason (`{error}`: what the probe saw,
#: `{who}`: the compiler and its flags, `{torch}`: torch's version).
_STOPPED = {
    "pending": (Status.INCONCLUSIVE, "the ABI compile is still running"),
    "no-torch": (Status.NOT_APPLICABLE, "torch is not installed for this interpreter"),
    "no-headers": (Status.NOT_APPLICABLE,
                   "torch {torch} ships no C++ headers ({header}): no extension builds against it"),
    "no-library": (Status.INCONCLUSIVE, "torch has headers but no libtorch_cpu.so to look the symbol up in"),
    "no-compiler": (Status.INCONCLUSIVE, "no C++ compiler: {error}"),
    "timed-out": (Status.INCONCLUSIVE, "{who}: {error}"),
    "not-compiled": (Status.INCONCLUSIVE, "{who} cannot compile the probe: {error}"),
    "failed": (Status.INCONCLUSIVE, "{error}"),
}


def judge(abi: AbiInfo) -> Tuple[Optional[Status], str]:
    """The verdict on the ABI probe's facts and its reason; (None, "") when the probe did not run.
    A report states it beside the facts (`environment.abi.status` and `reason`)."""
    from inductor_doctor.probe.abi import EXPECTED_SPELLINGS, HEADER

    if abi.stage is None:
        return None, ""
    if abi.stage != "compared":
        status, text = _STOPPED.get(abi.stage, (Status.INCONCLUSIVE, "{error}"))
        return status, text.format(error=abi.error or f"the ABI probe stopped at {abi.stage}",
                                   who=_describe(abi), torch=abi.torch_version or "", header=HEADER)
    torch_name = f"libtorch_cpu.so (torch {abi.torch_version})" if abi.torch_version else "libtorch_cpu.so"
    if not abi.referenced:
        return Status.OK, f"{_describe(abi)} references no const_data_ptr symbol (nothing to mismatch)"
    if not abi.missing:
        return Status.OK, f"{_describe(abi)} references {abi.referenced[0]}, which {torch_name} exports"
    exported = (
        f"it exports {abi.exported_spelling}"
        if abi.exported_spelling
        else "it exports neither GCC spelling " + " nor ".join(EXPECTED_SPELLINGS)
    )
    hint = ""
    if "Tn" in abi.missing[0] and (abi.compiler_version or "").startswith("clang"):
        hint = " (clang >= 18 mangling; -fclang-abi-compat=17 or g++ avoids it)"
    return Status.AFFECTED, (f"{_describe(abi)} references {abi.missing[0]}, which {torch_name} does not "
                             f"export; {exported}{hint}")


def _describe(abi: AbiInfo) -> str:
    """The compiler and the flags the probe compiled with, as the reasons name them."""
    who = abi.compiler or "?"
    if abi.compiler_version:
        who += f" ({abi.compiler_version})"
    return f"{who} with {' '.join(abi.flags)}"


def _abi_compat(flags: Sequence[str]) -> Optional[int]:
    value = None
    for f in flags:  # the last one wins, as on a real command line
        m = _ABI_COMPAT.match(f)
        if m:
            value = int(m.group(1))
    return value


def _v(status: Status, reason: str) -> List[RuleOutcome]:
    return [RuleOutcome(status, reason, Basis.VERSION)]


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan`: torch headers with the enable_if form, built by clang >= 18 without the compat flag."""
    torch = inp.package("torch")
    if torch is None:
        return _v(Status.NOT_APPLICABLE, "torch is not in the plan")
    if inp.judge("torch", AFFECTED_TORCH).share == "none":
        return _v(Status.OK, f"{torch.describe()}: its headers declare const_data_ptr<T> without enable_if "
                  f"(only torch{AFFECTED_TORCH} has it), which every compiler mangles alike")
    cxx = inp.cxx
    if cxx is None:
        return unpredictable("the skew needs an extension built by clang >= 18, and the plan names no C++ "
                             "compiler", with_option("--cxx COMPILER", "const-data-ptr-abi"))
    if cxx.kind == "gcc":
        return _v(Status.OK, f"{cxx.command} is GCC, which mangles const_data_ptr like the official "
                  "(GCC-built) libtorch")
    if cxx.kind != "clang":
        return _v(Status.INCONCLUSIVE, f"cannot tell from its name which compiler `{cxx.command}` is; "
                  "run `inductor-doctor check` where it is installed")
    compat = _abi_compat(inp.cxxflags)
    if compat is not None and compat < FIRST_CLANG_WITH_NEW_MANGLING:
        return _v(Status.OK, f"-fclang-abi-compat={compat} keeps the pre-clang-18 mangling")
    major = cxx.major
    if major is not None and major < FIRST_CLANG_WITH_NEW_MANGLING:
        return _v(Status.OK, f"clang {major} still uses the old mangling (it changed in clang 18)")
    judged = inp.judge("torch", AFFECTED_TORCH)
    if judged.share == "unknown":
        return _v(Status.INCONCLUSIVE, f"the version of {torch.describe()} is known only once installed; "
                  f"torch{AFFECTED_TORCH} declare const_data_ptr with enable_if")
    if judged.share == "all":
        torch_part = f"{torch.describe()} declares const_data_ptr with an enable_if default argument"
    else:
        torch_part = (f"{torch.describe()} may be a torch whose headers declare const_data_ptr with "
                      f"enable_if (torch{AFFECTED_TORCH})")
    if major is None:
        return _v(Status.LIKELY, f"{torch_part}; `{cxx.command}` is clang of unknown version (clang >= 18 "
                  "mangles it with `Tn`, which libtorch does not export)")
    status = Status.AFFECTED if judged.share == "all" else Status.LIKELY
    return _v(status, f"{torch_part}; clang {major} mangles it with `Tn`, a symbol libtorch does not "
              "export (add -fclang-abi-compat=17 or use g++)")
