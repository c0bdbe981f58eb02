"""Helpers the GPU/CUDA issues share: what torch sees, and which of torch's kernels a GPU can run.

Every CUDA row is about a GPU torch will see (`facts.gpus`, after CUDA_VISIBLE_DEVICES); where the
driver lists GPUs that torch will not see, the rules say so instead of "no GPU here", and point at
cuda-devices-hidden, which explains why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import gpu_sm, one, outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, GPUInfo


def hidden_reason(facts: Facts) -> Optional[str]:
    """Why torch sees no GPU although the driver lists some; None when that is not the case."""
    cuda = facts.cuda
    if facts.gpus or not cuda.driver_gpus:
        return None
    n = len(cuda.driver_gpus)
    if cuda.visible_devices is not None:
        why = f"CUDA_VISIBLE_DEVICES={cuda.visible_devices!r} hides them"
    else:
        why = "the live torch reports none"
    return f"torch sees none of the driver's {n} GPU{'s' if n != 1 else ''} ({why}; see cuda-devices-hidden)"


def no_visible_gpu(facts: Facts, default: str = "no NVIDIA GPU here") -> List[RuleOutcome]:
    """`not-applicable` with the right reason: no GPU at all, or GPUs torch will not see."""
    return one(Status.NOT_APPLICABLE, hidden_reason(facts) or default)


def gpus_with_capability(facts: Facts, out: List[RuleOutcome]) -> Iterator[Tuple[GPUInfo, Tuple[int, int]]]:
    """Each GPU torch sees with its compute capability, in order; a GPU whose capability is unknown
    gets its `inconclusive` in `out` instead, so that no rule judges a GPU it knows nothing of."""
    for gpu in facts.gpus:
        cap = gpu_sm(gpu)
        if cap is None:
            out.append(outcome(Status.INCONCLUSIVE, f"{gpu.name}: compute capability unknown",
                               device=gpu.device))
            continue
        yield gpu, cap


# --- which compiled code a GPU runs: torch/cuda/__init__.py's DEVICE_REQUIREMENT -------------------

#: code sm -> (first device sm, excluded device sms, exact set or None). A cubin runs on GPUs of the
#: same major version and an equal or higher minor, except the integrated (Jetson) parts that
#: `DEVICE_REQUIREMENT` sets apart (torch 2.10+, torch/cuda/__init__.py).
_INTERVAL_EXCLUDES: Dict[int, Tuple[int, ...]] = {
    50: (53,), 52: (53,), 60: (62,), 61: (62,), 70: (72,), 80: (87,), 86: (87,), 100: (101,),
}  # fmt: skip
_EXACT: Dict[int, Tuple[int, ...]] = {53: (53,), 62: (62,), 72: (72,), 87: (87,), 101: (101, 110)}


def arch_number(entry: str) -> Optional[Tuple[str, int, str]]:
    """`"sm_90a"` -> ("sm", 90, "a"); None for anything else."""
    kind, _, rest = entry.partition("_")
    suffix = rest[-1] if rest[-1:] in ("a", "f") else ""
    digits = rest[: len(rest) - len(suffix)]
    if kind not in ("sm", "compute") or not digits.isdigit():
        return None
    return kind, int(digits), suffix


def cubin_runs_on(code: int, suffix: str, device: int) -> bool:
    if suffix == "a":  # architecture-specific features: that architecture only
        return device == code
    if code in _EXACT:
        return device in _EXACT[code]
    if device in _INTERVAL_EXCLUDES.get(code, ()):
        return False
    return device // 10 == code // 10 and device % 10 >= code % 10


def ptx_runs_on(code: int, suffix: str, device: int) -> bool:
    """PTX is JIT-compiled by the driver for any GPU of at least its architecture."""
    if suffix == "a":
        return device == code
    return device >= code


def support(device: int, arch_list: Sequence[str]) -> Tuple[str, Optional[str]]:
    """`("cubin" | "ptx" | "none", the entry that serves the GPU)` for a GPU of capability `device`."""
    ptx: Optional[str] = None
    for entry in arch_list:
        parsed = arch_number(entry)
        if parsed is None:
            continue
        kind, code, suffix = parsed
        if kind == "sm" and cubin_runs_on(code, suffix, device):
            return "cubin", entry
        if kind == "compute" and ptx is None and ptx_runs_on(code, suffix, device):
            ptx = entry
    return ("ptx", ptx) if ptx else ("none", None)
