"""Helpers shared by the environment-failure catalog (missing compilers, headers, Triton, drivers).

These issues are decided by what is installed rather than by a bug in one release, so their rules
read the probe's facts and, where torch or Triton states its own requirement in a source file, that
file as text (the doctor never imports either). Each helper answers `None` for "unknown".
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import CompilerInfo, Facts, GPUInfo

MAX_SOURCE_BYTES = 4 * 1024 * 1024


def read_text(path: Optional[str], limit: int = MAX_SOURCE_BYTES) -> Optional[str]:
    """A source file as text, or None when it is absent or unreadable."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return None


def torch_source(facts: Facts, *parts: str) -> Optional[str]:
    """A file of the installed torch package (`torch_source(facts, "_inductor", "utils.py")`)."""
    if facts.torch is None or not facts.torch.path:
        return None
    return read_text(os.path.join(facts.torch.path, *parts))


def triton_source(facts: Facts, *parts: str) -> Optional[str]:
    if facts.triton is None or not facts.triton.path:
        return None
    return read_text(os.path.join(facts.triton.path, *parts))


def version_tuple(text: Optional[str], parts: int = 3) -> Optional[Tuple[int, ...]]:
    """`"12.4.99"` → (12, 4, 99); `"12.4"` → (12, 4, 0); None for anything without a leading number."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)((?:\.\d+)*)", str(text))
    if not m:
        return None
    nums = [int(m.group(1))] + [int(x) for x in m.group(2).split(".") if x]
    nums = (nums + [0] * parts)[:parts]
    return tuple(nums)


def dotted(v: Tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def is_gpu_torch(facts: Facts) -> bool:
    """Whether torch was built for a GPU (CUDA or ROCm), so that Inductor would emit Triton."""
    t = facts.torch
    return t is not None and bool(t.cuda or t.hip)


def torch_label(facts: Facts) -> str:
    t = facts.torch
    if t is None:
        return "torch (not installed)"
    build = f"CUDA {t.cuda}" if t.cuda else f"ROCm {t.hip}" if t.hip else "CPU-only"
    return f"torch {t.version or '?'} ({build})"


def compiler_label(info: CompilerInfo) -> str:
    """`g++ 12.2.0 (/usr/bin/g++)`, or just what was asked for when nothing was found."""
    name = info.command or "?"
    label = f"{name} {info.version}" if info.version else name
    if info.path and info.path != name:
        label += f" ({info.path})"
    return label


def compiler_missing(info: CompilerInfo) -> bool:
    """True when the probe looked and found no runnable compiler (not when it did not look)."""
    return info.path is None and info.works is False


def compiler_major(info: CompilerInfo) -> Optional[int]:
    v = version_tuple(info.version, 1)
    return v[0] if v else None


def gpu_sm(gpu: GPUInfo) -> Optional[Tuple[int, int]]:
    """Compute capability as (major, minor), from `"8.6"`."""
    v = version_tuple(gpu.sm, 2)
    return (v[0], v[1]) if v else None


def outcome(status: Status, reason: str, basis: Basis = Basis.STATIC, device: Optional[str] = None,
            **details: Any) -> RuleOutcome:
    return RuleOutcome(status, reason, basis, device=device, details=details)


def one(status: Status, reason: str, basis: Basis = Basis.STATIC, device: Optional[str] = None,
        **details: Any) -> List[RuleOutcome]:
    return [outcome(status, reason, basis, device, **details)]


def no_gpu(what: str = "no NVIDIA GPU here") -> List[RuleOutcome]:
    return one(Status.NOT_APPLICABLE, what)


def platform_is_linux(facts: Facts) -> Optional[bool]:
    plat = facts.python.platform
    return None if not plat else plat.startswith("linux")


def unshadow_triton(facts: Facts) -> Optional[Workaround]:
    """Where a copy of Triton shadows the installed one (TritonInfo.shadowed_install): take its
    directory off the import path, the PYTHONPATH without it as the command where it came from
    there. None when nothing shadows it. What triton-missing and triton-version-skew advise first."""
    triton = facts.triton
    if triton is None or not triton.shadowed_install or not triton.path:
        return None
    parent = os.path.dirname(os.path.abspath(triton.path))
    entries = [e for e in (facts.env.get("PYTHONPATH") or "").split(os.pathsep) if e]
    kept = [e for e in entries if os.path.abspath(e) != parent]
    command = None
    if len(kept) < len(entries):
        command = f"export PYTHONPATH={os.pathsep.join(kept)}" if kept else "unset PYTHONPATH"
    return Workaround(f"Take {parent} off the import path (PYTHONPATH, a .pth file, the working directory) "
                      f"so that `import triton` finds the installed {triton.distribution} {triton.version}",
                      command, "env")
