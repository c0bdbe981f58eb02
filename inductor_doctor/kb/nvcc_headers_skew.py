"""nvcc and the CUDA headers from different releases.

nvcc's generated host stubs call `__cudaLaunch` with the arguments of its own release (one before
CUDA 13, two from CUDA 13); another release's crt/host_runtime.h found first on the include path
makes every stub fail to compile. The probe (probe/cuda_headers.py) reads nvcc's own headers (where
`nvcc --dryrun` says they are) and every CUDA header directory a compile searches before them; a
crt/host_runtime.h whose macro differs is conclusive, runtime headers of another release a
prediction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

_LAUNCH = {1: "__cudaLaunch(fun)", 2: "__cudaLaunch(fun, isTileKernel)"}


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        # The builds that meet nvcc here are torch's (cpp_extension, its JITs, AOTInductor); a CPU
        # torch's CUDAExtension still runs nvcc, so only torch's absence rules the issue out.
        return not_installed("torch")
    info = facts.cuda_headers
    if info is None:
        return one(Status.NOT_APPLICABLE, "no nvcc here (cuda-toolkit-missing says whether one is needed)")
    own = next((d for d in info.dirs if d.source == "nvcc's own"), None)
    nvcc = f"nvcc {info.nvcc_version}" if info.nvcc_version else f"nvcc ({info.nvcc})"
    others = [d for d in info.dirs if d is not own]
    if own is not None and own.launch_args:
        for d in others:
            if d.launch_args and d.launch_args != own.launch_args:
                theirs = _LAUNCH.get(d.launch_args, str(d.launch_args))
                mine = _LAUNCH.get(own.launch_args, str(own.launch_args))
                return one(Status.AFFECTED, f"{nvcc} compiles with {d.path}/crt/host_runtime.h from "
                           f"{d.source} first, another CUDA release's ({theirs}, where nvcc's own has "
                           f"{mine}): every kernel launch stub fails with 'macro \"__cudaLaunch\" ... "
                           "arguments'",
                           Basis.STATIC, path=d.path)
    version = (info.nvcc_version or "").split(".")[:2]
    skewed = [d for d in others if d.runtime and version and d.runtime.split(".")[:2] != version]
    if skewed:
        d = skewed[0]
        return one(Status.LIKELY, f"{nvcc} compiles with CUDA {d.runtime}'s runtime headers from {d.source} "
                   f"({d.path}) first: declarations of another release than the compiler's", Basis.STATIC,
                   path=d.path)
    found = ", ".join(f"{d.source} {d.path}" for d in info.dirs) or "none found"
    return one(Status.OK, f"{nvcc} compiles with its own release's CUDA headers ({found})")
