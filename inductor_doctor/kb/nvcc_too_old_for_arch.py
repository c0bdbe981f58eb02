"""The local nvcc cannot compile for the GPU's architecture, or for one an arch list asks for.

Extensions built here (`torch.utils.cpp_extension`, `pip install` of flash-attn, xformers, apex...)
and the libraries that JIT-build CUDA kernels at run time (FlashInfer, vLLM's and SGLang's kernels)
compile with the toolkit's nvcc for the GPU's own architecture (cpp_extension takes it from the GPU
when TORCH_CUDA_ARCH_LIST is unset; FlashInfer always does, with the `a`/`f` suffixes of sm_90a and
sm_120f). An nvcc older than the GPU (CUDA 12.6 on an RTX 50xx, sm_120; a JetPack nvcc on Thor,
sm_110) or newer than it (CUDA 13 dropped sm_50 to sm_72: a GTX 10xx, a V100, a Jetson Xavier)
answers `nvcc fatal : Unsupported gpu architecture 'compute_120'`; FlashInfer checks first and
says "SM 12.x requires CUDA >= 12.9", then, misleadingly, "FlashInfer requires GPUs with sm75 or
higher". torch.compile itself never runs nvcc (Triton brings its ptxas): a warning.

The rule reads what nvcc itself says it can compile for (`nvcc --list-gpu-arch`, probe/cuda_toolkit.py,
the nvcc torch finds under CUDA_HOME) and each GPU's capability, and the entries of the arch lists in
the environment (TORCH_CUDA_ARCH_LIST, FLASHINFER_CUDA_ARCH_LIST): conclusive, no table of releases.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import gpu_sm, one
from inductor_doctor.kb._gpus import hidden_reason
from inductor_doctor.kb._rules import cuda_toolkit

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: The arch lists a build or a JIT reads from the environment, and who reads each.
ARCH_LISTS = {"TORCH_CUDA_ARCH_LIST": "torch.utils.cpp_extension", "FLASHINFER_CUDA_ARCH_LIST": "FlashInfer"}
_ENTRY = re.compile(r"(\d+)\.(\d+)([af]?)")


def requested(value: str) -> List[Tuple[str, int]]:
    """`"8.0 9.0a;12.0+PTX"` -> [("8.0", 80), ("9.0a", 90), ("12.0+PTX", 120)]: each entry and the
    architecture it asks nvcc for (named ones such as `Ampere` are torch's and left out)."""
    out = []
    for token in re.split(r"[\s;,]+", value.strip()):
        m = _ENTRY.match(token)
        if m:
            out.append((token, int(m.group(1)) * 10 + int(m.group(2))))
    return out


def _number(arch: str) -> Optional[int]:
    digits = re.sub(r"\D", "", arch)
    return int(digits) if digits else None


def rule(facts: Facts) -> List[RuleOutcome]:
    stop, tk = cuda_toolkit(facts)
    if stop:
        return stop
    if tk.nvcc is None:
        return one(Status.NOT_APPLICABLE, "no nvcc under torch's CUDA_HOME to judge (cuda-toolkit-missing "
                   "says whether one is needed)")
    nvcc = f"nvcc {tk.nvcc_version or '?'} ({tk.nvcc})"
    if not tk.nvcc_archs:
        return one(Status.INCONCLUSIVE, f"{nvcc} did not list the architectures it compiles for "
                   "(`nvcc --list-gpu-arch`)")
    known = sorted({n for n in map(_number, tk.nvcc_archs) if n is not None})
    span = f"compute_{known[0]} to compute_{known[-1]}"
    problems: List[str] = []
    partial: List[str] = []
    unknown = [gpu.name for gpu in facts.gpus if gpu_sm(gpu) is None]
    gpus = [(gpu, cap) for gpu in facts.gpus if (cap := gpu_sm(gpu)) is not None]
    for gpu, (major, minor) in gpus:
        cc = major * 10 + minor
        if cc in known:
            continue
        earlier = [k for k in known if k // 10 == major and k < cc]
        if earlier:
            partial.append(f"{gpu.name} is sm_{cc}, which {nvcc} does not list ({span}): builds for the "
                           f"GPU's own architecture fail ('Unsupported gpu architecture 'compute_{cc}''), "
                           f"though sm_{earlier[-1]} code runs there")
        else:
            problems.append(f"{gpu.name} is sm_{cc}, and {nvcc} compiles for {span} only: every extension "
                            f"or JIT kernel built here for it fails with 'nvcc fatal : Unsupported gpu "
                            f"architecture 'compute_{cc}''")
    for name, reader in ARCH_LISTS.items():
        value = facts.env.get(name)
        if not value:
            continue
        missing = [entry for entry, number in requested(value) if number not in known]
        if missing:
            problems.append(f"{name}={value!r} asks {reader} for {', '.join(missing)}, which {nvcc} does "
                            f"not list ({span})")
    if problems or partial:
        status = Status.AFFECTED if problems else Status.LIKELY
        return one(status, "; ".join(problems + partial) + " (torch.compile itself does not use nvcc)",
                   nvcc=tk.nvcc_version, nvcc_archs=list(tk.nvcc_archs))
    if unknown:
        return one(Status.INCONCLUSIVE, f"the compute capability of {', '.join(unknown)} is unknown")
    if not gpus and not any(facts.env.get(n) for n in ARCH_LISTS):
        return one(Status.NOT_APPLICABLE, (hidden_reason(facts) or "no NVIDIA GPU here") +
                   ", and no arch list (TORCH_CUDA_ARCH_LIST) asks for one")
    asked = [f"sm_{m * 10 + n}" for _g, (m, n) in gpus]
    return one(Status.OK, f"{nvcc} compiles for {span}: "
               f"{', '.join(asked) if asked else 'the arch lists asked'} among them")
