"""An NVIDIA GPU is present but torch is a CPU-only build: nothing compiles for it.

pip picks a CPU-only torch when the index URL or platform says so (the default Windows/macOS
wheels, `--index-url .../whl/cpu`, a requirements file pinning `+cpu`, a dependency that pulled
torch from PyPI on a non-Linux host), and the GPU is then invisible: `torch.cuda.is_available()` is
False and any `device="cuda"` stops with "Torch not compiled with CUDA enabled", compiled or not.
The build flavour (torch/version.py) and the GPUs (nvidia-smi) are plain facts: conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
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


ISSUE = KnownIssue(
    id="torch-cpu-only-build",
    title="NVIDIA GPU present but torch is a CPU-only build ('Torch not compiled with CUDA enabled')",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=("pytorch/pytorch#28111", "X-PLUG/MobileAgent#60", "Comfy-Org/desktop#1647"),
    aliases=("torch-not-compiled-with-cuda", "cpu-only-torch"),
    summary=(
        "The machine has NVIDIA GPUs but the installed torch was built without CUDA (a `+cpu` wheel, the "
        "default wheel on Windows, or torch pulled in from the wrong index by another package). "
        "`torch.cuda.is_available()` is False and every CUDA tensor, compiled or eager, fails with "
        "`AssertionError: Torch not compiled with CUDA enabled`."
    ),
    signatures=(
        # On a Mac the words are true, but no CUDA build exists to install (pytorch#96976,
        # deepbeepmeep/Wan2GP#1680): the device is "mps" or "cpu".
        Signature(r"Torch not compiled with CUDA enabled",
                  against=r"\bmacOS\b|\bdarwin\b|(?<![\w:])/Users/|\bApple (?:M\d|silicon)|arm64-apple",
                  against_says="the log is from a Mac, where no CUDA build of torch exists: use the "
                               "\"mps\" or "
                               "\"cpu\" device"),
        Signature(r"torch\.cuda\.is_available\(\)\s*(?:is|==|returned)\s*False", strength="partial"),
    ),
    workarounds=(
        Workaround("Reinstall torch from the CUDA index matching the driver (cu128 shown; see "
                   "pytorch.org for the selector)",
                   "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128",
                   "install"),
        Workaround("Check what pip resolved: a `+cpu` local version, or `torch.version.cuda` of None",
                   "python -c 'import torch; print(torch.__version__, torch.version.cuda)'", "other"),
        Workaround("On a Mac there is no CUDA build: run on the \"mps\" device (Apple silicon) or \"cpu\", "
                   "and guard code that asks torch.cuda for a GPU", None, "code"),
    ),
    rule=rule,
)
