"""Intel XPU: the driver stack torch's XPU build and Triton's Intel backend need, and what it pairs with.

torch.xpu reaches the GPU through the Level Zero loader and Intel's GPU driver (the compute runtime),
which builds every Triton kernel with IGC: a driver release that does not pair with this torch's
Triton fails there ("Triton Error [ZE]: 0x78000011", ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, after a
driver update: pytorch#151898, intel/torch-xpu-ops#1763). Triton's Intel backend compiles its launcher
against `level_zero/ze_api.h` under `$LEVEL_ZERO_V1_SDK_PATH/include` (else `$ZE_PATH`, else
/usr/local: "'level_zero/ze_api.h' file not found" on Windows without the Level Zero SDK,
intel/torch-xpu-ops#2029) and a SYCL runtime ("sycl headers not found"). The rule reads what is
installed; which driver release Intel validated for which torch is not tabled here, so a complete
stack is "not checked" for its pairing, never ok.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    torch = facts.torch
    if torch is None or not torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    if "+xpu" not in torch.version:
        return one(Status.NOT_APPLICABLE, f"torch {torch.version} is not an XPU build")
    xpu = facts.platform.xpu if facts.platform is not None else None
    if xpu is None:
        return one(Status.INCONCLUSIVE, "the XPU driver stack was not probed (a report from an older "
                   "doctor?)")
    missing: List[str] = []
    if xpu.ze_loader is None:
        missing.append("the Level Zero loader (libze_loader.so.1 / ze_loader.dll): torch.xpu sees no device")
    if xpu.ze_driver is None:
        missing.append("Intel's Level Zero GPU driver (libze_intel_gpu.so.1 / ze_intel_gpu64.dll, the "
                       "compute runtime)")
    if xpu.ze_headers is None:
        missing.append(f"level_zero/ze_api.h where Triton's Intel backend looks "
                       f"({', '.join(xpu.ze_header_search)}; set LEVEL_ZERO_V1_SDK_PATH): its launcher "
                       "does not compile")
    if xpu.sycl is None:
        missing.append("a SYCL runtime for Triton's Intel backend (icpx, ONEAPI_ROOT or "
                       "intel-sycl-rt>=2025): \"sycl headers not found\"")
    if missing:
        return one(Status.AFFECTED, "missing " + "; ".join(missing))
    driver = ", ".join(f"{k} {v}" for k, v in sorted(xpu.driver_packages.items())) or \
        f"Level Zero loader {xpu.ze_loader_version or '?'}, GPU driver {xpu.ze_driver_version or '?'}"
    return one(Status.INCONCLUSIVE, f"the XPU stack is installed ({driver}; IGC {xpu.igc_version or '?'}; "
               f"SYCL from {xpu.sycl}), but whether this driver pairs with torch {torch.version}'s Triton is "
               "not checked: no table of validated drivers, no canary on xpu")
