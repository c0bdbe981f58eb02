"""`predict` hooks for known issues whose trigger goes beyond package versions.

A known issue names its hook with `predict=` in its `kb/` module. The hooks live here, next to
`PlanInput`, so that an issue module stays one import and one keyword longer, and so that the
logic that reads compiler names and flags has one home. Hooks import nothing at module level
beyond the model: `list` and `explain` import every issue module and must stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.model import Basis, RuleOutcome, Status

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.plan import PlanInput

#: torch releases before this declare `const_data_ptr` with the enable_if parameter that clang
#: >= 18 mangles as `Tn...` (known-issues §4: verified from the wheels' headers, 2.5.1 … 2.11.0).
CONST_DATA_PTR_AFFECTED_TORCH = "<2.12"
CLANG_NEW_MANGLING = 18


def _outcome(status: Status, reason: str) -> List[RuleOutcome]:
    return [RuleOutcome(status, reason, Basis.VERSION)]


def _abi_compat(inp: PlanInput) -> Optional[int]:
    """The effective `-fclang-abi-compat=N` (the last one wins); None when absent or `latest`."""
    values = inp.flag_values("-fclang-abi-compat=")
    if not values:
        return None
    try:
        return int(values[-1].split(".")[0])
    except ValueError:
        return None


def const_data_ptr_abi(inp: PlanInput) -> List[RuleOutcome]:
    """clang >= 18 AND torch < 2.12 AND no `-fclang-abi-compat=N` (N <= 17) in the flags.

    Extensions built that way reference a `const_data_ptr` symbol libtorch does not export.
    """
    torch = inp.judge("torch", CONST_DATA_PTR_AFFECTED_TORCH)
    if torch.share == "absent":
        return _outcome(Status.NOT_APPLICABLE, "torch is not in the plan")
    cxx = inp.cxx
    if cxx is None:
        return _outcome(
            Status.NOT_APPLICABLE,
            "no --cxx given: the skew needs clang >= 18 building a C++ extension; pass --cxx to predict it",
        )
    if cxx.kind == "gcc":
        return _outcome(Status.OK, f"{cxx.command} (GCC) mangles const_data_ptr the way libtorch exports it")
    if cxx.kind == "msvc":
        return _outcome(Status.NOT_APPLICABLE, f"{cxx.command} uses the MSVC ABI, not the Itanium mangling")
    if cxx.kind != "clang":
        return _outcome(
            Status.INCONCLUSIVE,
            f"cannot tell from the name {cxx.command!r} which compiler this is; "
            "pass --cxx clang++-NN or g++-NN",
        )
    if cxx.major is not None and cxx.major < CLANG_NEW_MANGLING:
        return _outcome(Status.OK, f"clang {cxx.major} still uses the old mangling (the change is clang 18)")
    compat = _abi_compat(inp)
    if compat is not None and compat < CLANG_NEW_MANGLING:
        return _outcome(Status.OK, f"-fclang-abi-compat={compat} keeps the mangling libtorch exports")
    torch_pkg = inp.package("torch")
    shown = torch_pkg.describe() if torch_pkg else "torch"
    if torch.share == "unknown":
        return _outcome(Status.INCONCLUSIVE, f"the version of {shown} is unknown; pin torch to decide")
    if torch.share == "none":
        return _outcome(
            Status.OK, f"{shown} declares const_data_ptr without the enable_if parameter (changed in 2.12)"
        )
    who = (
        f"clang {cxx.major}"
        if cxx.major is not None
        else f"{cxx.command} (version unknown: clang >= 18 hits)"
    )
    status = torch.status if cxx.major is not None else Status.LIKELY
    which = shown if torch.share == "all" else f"{shown} (some of its releases: {', '.join(torch.hits[:4])})"
    return _outcome(
        status,
        f"{who} mangles const_data_ptr<T> with the enable_if parameter declared by {which}; "
        "libtorch exports only the old name, so extensions fail to load with an undefined symbol",
    )
