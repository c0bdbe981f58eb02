"""A platform the doctor's checks were not written for: ROCm, Intel XPU, Apple (MPS), Windows.

The GPU checks read NVIDIA's stack (the CUDA toolkit, ptxas, libcuda, the nvidia-* wheels, the
driver's GPU list) and the C++ checks a Linux compiler (g++/clang, OpenMP, glibc). On a ROCm build
torch still calls its GPUs `cuda`, so the CUDA rows appear, decided by rules about NVIDIA: read as
health they would be a lie. This issue says so first (a headline, before the matrix), names the
checks that do not speak for the platform, and is `inconclusive`: could not check is never ok.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: platform -> (what the doctor's checks miss there)
UNCOVERED = {
    "ROCm": "the GPU rows are written for NVIDIA (CUDA toolkit, ptxas, libcuda, nvidia-* wheels, the "
            "NVIDIA driver) and say nothing about an AMD GPU, its ROCm runtime, HIP compiler or ld.lld",
    "Intel XPU": "no check reads the XPU stack (oneAPI, Level Zero, Triton's Intel backend); only the "
                 "CPU and toolchain rows apply",
    "macOS": "the MPS device is not checked, and the C++ checks assume a Linux toolchain (Apple clang "
             "needs Homebrew's libomp for OpenMP)",
    "Windows": "the C++ checks assume g++/clang, not MSVC's cl.exe (its host/target architecture, "
               "Python libs, MAX_PATH), and Triton comes from triton-windows",
}


def platform_of(facts: Facts) -> Tuple[Optional[str], str]:
    """(the uncovered platform, how it was told) or (None, a description of the covered one)."""
    torch = facts.torch
    version = (torch.version or "") if torch is not None else ""
    local = version.partition("+")[2].lower()
    system = (facts.python.platform or "").lower()
    if torch is not None and (torch.hip or local.startswith("rocm")):
        return "ROCm", f"torch {version} is a ROCm build (HIP {torch.hip or local[4:] or '?'})"
    if local.startswith("xpu"):
        return "Intel XPU", f"torch {version} is an Intel XPU build"
    if system == "darwin":
        return "macOS", f"this interpreter runs on macOS (sys.platform {system!r})"
    if system.startswith("win"):
        return "Windows", f"this interpreter runs on Windows (sys.platform {system!r})"
    build = f"CUDA {torch.cuda}" if torch is not None and torch.cuda else "CPU"
    return None, f"Linux, torch {version} ({build} build)"


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    name, how = platform_of(facts)
    if name is None:
        return one(Status.OK, f"{how}: the platform the checks are written for")
    return one(Status.INCONCLUSIVE, f"{how}: a platform inductor-doctor does not cover yet — "
               f"{UNCOVERED[name]}. Rows that read ok there are about the parts the doctor knows, "
               "not a clean bill of health")
