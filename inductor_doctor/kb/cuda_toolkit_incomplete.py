"""A CUDA toolkit that has nvcc and the runtime's headers but not the math libraries' development headers.

Minimal toolkit installs (a container's `cuda-nvcc` and `cuda-cudart-dev` packages only, a runtime
image with the libraries' runtime packages, a JetPack or conda toolkit without `*-dev`) build a plain
`.cu` file, but every CUDA extension built against torch includes torch's `ATen/cuda/CUDAContext.h`,
whose `CUDAContextLight.h` includes `cusparse.h`, `cublas_v2.h`, `cublasLt.h` and `cusolverDn.h`; and the
libraries that JIT-build kernels include more (FlashInfer's sampling `curand.h`, NVRTC-based JITs
`nvrtc.h`). The build stops at `fatal error: cusparse.h: No such file or directory` (reproduced here:
nvcc 13.0 whose toolkit has no math library headers, compiling a file that includes torch 2.9's
CUDAContext.h).

The probe reads the headers torch's own CUDA context header includes from the installed torch, and
looks for them, and for the JIT builds' usual ones, under torch's CUDA_HOME/include. A toolkit with no
runtime headers at all is cuda-toolkit-missing's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one, version_tuple
from inductor_doctor.kb._rules import cuda_toolkit

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: The toolkit's development packages each header comes in (NVIDIA's apt names, CUDA 12/13).
PACKAGES = {
    "cusparse.h": "libcusparse-dev", "cublas_v2.h": "libcublas-dev", "cublasLt.h": "libcublas-dev",
    "cusolverDn.h": "libcusolver-dev", "curand.h": "libcurand-dev", "curand_kernel.h": "libcurand-dev",
    "cufft.h": "libcufft-dev", "nvrtc.h": "cuda-nvrtc-dev",
}


def packages(headers: List[str]) -> str:
    return ", ".join(dict.fromkeys(PACKAGES.get(h, h) for h in headers))


def rule(facts: Facts) -> List[RuleOutcome]:
    stop, tk = cuda_toolkit(facts)
    if stop:
        return stop
    if tk.cuda_home is None or tk.nvcc is None or tk.cuda_runtime_h is None:
        return one(Status.NOT_APPLICABLE, "no CUDA toolkit with its runtime headers to judge "
                   "(cuda-toolkit-missing says whether one is needed)")
    home = f"CUDA_HOME={tk.cuda_home}"
    torch_needs = [h for h in tk.missing_headers if h in tk.extension_headers]
    others = [h for h in tk.missing_headers if h not in tk.extension_headers]
    if torch_needs:
        also = f"; nor {', '.join(others)}" if others else ""
        return one(Status.AFFECTED, f"{home} has nvcc and the runtime's headers but not "
                   f"{', '.join(torch_needs)}, which torch's ATen/cuda/CUDAContextLight.h includes: every "
                   f"CUDA extension built against torch fails with '{torch_needs[0]}: No such file or "
                   f"directory'{also} (install {packages(tk.missing_headers)}; torch.compile itself does not "
                   "need them)",
                   missing=list(tk.missing_headers))
    if others:
        return one(Status.LIKELY, f"{home} lacks {', '.join(others)}: JIT builds that include them fail "
                   f"(FlashInfer's sampling kernels include curand.h; install {packages(others)})",
                   missing=list(others))
    if not tk.extension_headers:
        return one(Status.INCONCLUSIVE, f"{home} has the JIT builds' headers; which ones torch's CUDA "
                   "context header includes could not be read from the installed torch")
    return one(Status.OK, f"{home} has the math libraries' headers torch's extensions include "
               f"({', '.join(tk.extension_headers)}) and the JIT builds' ones")


def advise(facts: Facts) -> List[Workaround]:
    """The -dev packages of the headers missing here, of the toolkit's own release, first."""
    tk = facts.toolkit
    release = version_tuple(tk.nvcc_version, 2) if tk is not None else None
    first: List[Workaround] = []
    if tk is not None and tk.missing_headers and release:
        suffix = f"-{release[0]}-{release[1]}"
        names = " ".join(dict.fromkeys(PACKAGES.get(h, h) + suffix for h in tk.missing_headers))
        first.append(Workaround(f"Install the development packages of the headers CUDA {tk.nvcc_version} "
                                f"lacks here ({', '.join(tk.missing_headers)})",
                                f"apt-get install -y {names}", "install"))
    return list(Workaround.pick(ISSUE_WORKAROUNDS, *first))


#: The workarounds as the data file writes them; `advise` puts the packages this toolkit lacks first.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
