"""ROCm installed by pip or TheRock (site-packages, no /opt/rocm): Triton's AMD backend cannot find
`ld.lld`, and AOTInductor cannot find the HIP headers.

Triton 3.1-3.4's AMD backend links every kernel with the first `ld.lld` of `TRITON_HIP_LLD_PATH`,
`<backend>/llvm/bin`, `/opt/rocm/llvm/bin`, `/usr/bin` (`path_to_rocm_lld` in
`triton/backends/amd/compiler.py`), else raises "ROCm linker /opt/rocm/llvm/bin/ld.lld not found.
Set 'TRITON_HIP_LLD_PATH' to its path." (ROCm/TheRock#2006, triton-lang/triton#10387); TheRock's
lives in `_rocm_sdk_core/lib/llvm/bin`. From 3.5 the backend links in process. torch's
`_find_rocm_home` before 2.13 takes the venv's root for ROCM_HOME (its `bin/hipcc` wrapper), where
there is no `include/hip/hip_runtime.h`, and AOTInductor's C++ compile fails (pytorch#180211,
ROCm/TheRock#1837). Both searches are read from the installed releases (probe/rocm.py). TheRock ships
the math libraries' headers (hipBLAS, rocBLAS...) in a devel package apart from the core, so a ROCM_HOME
at the core has `hip_runtime.h` and no `hipblas/hipblas.h`: extensions and JIT builds that include them
fail (ROCm/pytorch#3636, ROCm/TheRock#2452).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    torch = facts.torch
    if torch is None or not torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    rocm = facts.platform.rocm if facts.platform is not None else None
    if not (torch.hip or "+rocm" in torch.version):
        return one(Status.NOT_APPLICABLE, f"torch {torch.version} is not a ROCm build")
    if rocm is None:
        return one(Status.INCONCLUSIVE, "the ROCm toolchain was not probed (a report from an older doctor?)")
    problems: List[str] = []
    fine: List[str] = []
    lld_missing = False
    if rocm.backend_source is None:
        fine.append("no AMD backend in the installed Triton to link with (triton-missing says if one is due)")
    elif rocm.links_in_process:
        fine.append("Triton's AMD backend links in process (no ld.lld needed)")
    elif rocm.lld is None:
        lld_missing = True
        where = f"; there is one at {rocm.lld_elsewhere[0]}" if rocm.lld_elsewhere else ""
        problems.append(f"Triton's AMD backend ({rocm.backend_source}) looks for ld.lld in "
                        f"{', '.join(rocm.lld_search)} and finds none (\"ROCm linker ... not found. Set "
                        f"'TRITON_HIP_LLD_PATH'\"){where}")
    else:
        fine.append(f"Triton links with {rocm.lld}")
    if rocm.rocm_home is None:
        problems.append("torch finds no ROCm home (ROCM_HOME/ROCM_PATH unset, no hipcc, no /opt/rocm): "
                        "AOTInductor and C++ extensions get no HIP headers")
    elif rocm.hip_runtime_h is None:
        there = f"; they are in {rocm.hip_headers_elsewhere[0]}" if rocm.hip_headers_elsewhere else ""
        problems.append(f"torch's ROCM_HOME is {rocm.rocm_home} ({rocm.rocm_home_how}), which has no "
                        f"include/hip/hip_runtime.h: AOTInductor's C++ compile fails{there}")
    else:
        fine.append(f"HIP headers at {rocm.hip_runtime_h}")
        if rocm.hipblas_h is None:
            there = f"; they are in {rocm.math_headers_elsewhere[0]}" if rocm.math_headers_elsewhere else \
                " (TheRock keeps them in its devel package, which `rocm-sdk init` expands)"
            problems.append(f"torch's ROCM_HOME {rocm.rocm_home} has the HIP runtime's headers but not the "
                            "math libraries' (include/hipblas/hipblas.h): C++ extensions and JIT builds that "
                            f"include hipBLAS or rocBLAS fail{there}")
        else:
            fine.append(f"math library headers at {rocm.hipblas_h}")
    if problems and not lld_missing:
        # Only AOTInductor and C++ extensions compile against the headers; torch.compile does not.
        return one(Status.LIKELY, "; ".join(problems) + " (torch.compile itself does not need them)")
    if problems:
        return one(Status.AFFECTED, "; ".join(problems))
    return one(Status.OK, "; ".join(fine))


def advise(facts: Facts) -> List[Workaround]:
    """The ld.lld and the headers that are there, named: what to point each variable at."""
    rocm = facts.platform.rocm if facts.platform is not None else None
    first: List[Workaround] = []
    if rocm is not None and rocm.lld is None and rocm.lld_elsewhere:
        first.append(Workaround(f"Point Triton at the ld.lld this ROCm install has ({rocm.lld_elsewhere[0]})",
                                f'export TRITON_HIP_LLD_PATH="{rocm.lld_elsewhere[0]}"', "env"))
    if rocm is not None and rocm.hip_runtime_h is None and rocm.hip_headers_elsewhere:
        home = rocm.hip_headers_elsewhere[0].rsplit("/include/", 1)[0]
        first.append(Workaround(f"Point torch's ROCM_HOME at the ROCm tree that has the HIP headers ({home})",
                                f'export ROCM_HOME="{home}"', "env"))
    return list(Workaround.pick(ISSUE_WORKAROUNDS, *first))


#: The workarounds as the data file writes them; `advise` puts the paths found here first.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
