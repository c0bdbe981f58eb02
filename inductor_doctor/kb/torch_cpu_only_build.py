"""An NVIDIA GPU is present but torch is a CPU-only build: nothing compiles for it.

pip picks a CPU-only torch when the index URL or platform says so (the default Windows/macOS
wheels, `--index-url .../whl/cpu`, a requirements file pinning `+cpu`, a dependency that pulled
torch from PyPI on a non-Linux host), and the GPU is then invisible: `torch.cuda.is_available()` is
False and any `device="cuda"` stops with "Torch not compiled with CUDA enabled", compiled or not.
The build flavour (torch/version.py) and the GPUs (nvidia-smi) are plain facts: conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import is_gpu_torch, no_gpu, one, torch_label
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    if not facts.gpus:
        return no_gpu()
    if is_gpu_torch(facts):
        return one(Status.OK, f"{torch_label(facts)} can use the GPU")
    names = ", ".join(sorted({g.name for g in facts.gpus}))
    return one(Status.AFFECTED, f"{len(facts.gpus)} NVIDIA GPU(s) ({names}) but {torch_label(facts)}: "
               "torch cannot use them")
