"""No usable CUDA toolkit for AOTInductor or CUDA extensions (torch from pip brings none).

torch.compile on a GPU needs no local toolkit: Triton ships its ptxas and the CUDA libraries come
from the nvidia-* wheels. AOTInductor (`torch._inductor.aoti_compile_and_package`, `aot_compile`)
and CUDA extensions (`torch.utils.cpp_extension`) do: they compile C++ against the CUDA headers of
`CUDA_HOME` and run its `nvcc`. With none found, the build stops at "OSError: CUDA_HOME environment
variable is not set. Please set it to your CUDA install root." (pytorch/pytorch#197765, #150442,
pytorch/torchchat#68); with the headers missing at "cuda_runtime_api.h: No such file or
directory"; and cpp_extension refuses an nvcc of another CUDA major release than torch's ("The
detected CUDA version (13.0) mismatches the version that was used to compile PyTorch (12.4)").

The probe finds the toolkit exactly as `torch.utils.cpp_extension._find_cuda_home` does and looks
at what is there, so the verdict is conclusive. It is a warning: plain torch.compile is unaffected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_label, version_tuple
from inductor_doctor.kb._rules import cuda_toolkit

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

FOR_WHAT = "AOTInductor and CUDA extensions fail (plain torch.compile does not need it)"


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    stop, tk = cuda_toolkit(facts)
    if stop:
        return stop
    if tk.cuda_home is None:
        return one(Status.AFFECTED, "no CUDA toolkit: no CUDA_HOME or CUDA_PATH, no nvcc on PATH, no "
                   f"/usr/local/cuda, so torch's CUDA_HOME is None and {FOR_WHAT} with 'CUDA_HOME "
                   "environment variable is not set'")
    home = f"CUDA_HOME={tk.cuda_home} (from {tk.source})"
    if tk.cuda_home_exists is False:
        return one(Status.AFFECTED, f"{home} does not exist: {FOR_WHAT}")
    if tk.nvcc is None:
        return one(Status.AFFECTED, f"{home} has no bin/nvcc: {FOR_WHAT}")
    if tk.cuda_runtime_h is None:
        return one(Status.AFFECTED, f"{home} has no include/cuda_runtime.h: {FOR_WHAT} "
                   "('cuda_runtime_api.h: No such file or directory')")
    nv, tv = version_tuple(tk.nvcc_version, 2), version_tuple(t.cuda, 2)
    if nv is None:
        return one(Status.INCONCLUSIVE, f"{home}: the CUDA release of {tk.nvcc} is unknown")
    if tv is not None and nv[0] != tv[0]:
        return one(Status.AFFECTED, f"{home} holds nvcc {tk.nvcc_version}, and {torch_label(facts)} was "
                   f"built with CUDA {t.cuda}: cpp_extension refuses another major release ('The detected "
                   f"CUDA version ({tk.nvcc_version}) mismatches the version that was used to compile "
                   f"PyTorch ({t.cuda})')", nvcc=tk.nvcc_version, torch_cuda=t.cuda)
    return one(Status.OK, f"{home}: nvcc {tk.nvcc_version} and cuda_runtime.h, for torch's CUDA {t.cuda}")
