"""torch was built without kernels for this GPU: "no kernel image is available for execution".

A CUDA build of torch ships cubins for the architectures of its TORCH_CUDA_ARCH_LIST, and PTX for
those marked `+PTX`. A cubin runs on GPUs of the same major version and an equal or higher minor
(sm_80 code on an sm_86 card); PTX is compiled by the driver for any newer GPU. A GPU outside both
(an RTX 50xx, sm_120, under a cu124/cu126 wheel built for sm_50-sm_90; a GTX 10xx, sm_61, under a
cu128 wheel built from sm_70) gets "CUDA error: no kernel image is available for execution on the
device" from its first kernel, eager or compiled, after torch's own warning "... with CUDA
capability sm_120 is not compatible with the current PyTorch installation".

The rule reads the list `torch.cuda.get_arch_list()` returns from libtorch_python.so (or the live
torch) and applies torch's own compatibility table (`DEVICE_REQUIREMENT`, `_check_capability` and
`_check_cubins` in torch/cuda/__init__.py), plus PTX forward compatibility, which torch's warning
ignores. Both facts are read from the files: conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.kb._catalog import outcome, torch_label
from inductor_doctor.kb._gpus import gpus_with_capability, no_visible_gpu, support
from inductor_doctor.kb._rules import not_installed, planned_outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    if t.hip:
        return [RuleOutcome(Status.NOT_APPLICABLE, f"{torch_label(facts)}: ROCm builds name gfx targets "
                            "(see HSA_OVERRIDE_GFX_VERSION)", Basis.STATIC)]
    if not t.cuda:
        return [RuleOutcome(Status.NOT_APPLICABLE, f"{torch_label(facts)} has no CUDA kernels (see "
                            "torch-cpu-only-build)", Basis.STATIC)]
    if not facts.gpus:
        return no_visible_gpu(facts)
    archs = t.cuda_arch_list
    if not archs:
        return [RuleOutcome(Status.INCONCLUSIVE, f"could not read the GPU architectures {torch_label(facts)} "
                            "was built for (the live probe, --live, asks torch)", Basis.STATIC)]
    built = " ".join(archs)
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        cc = cap[0] * 10 + cap[1]
        how, entry = support(cc, archs)
        if how == "cubin":
            out.append(outcome(Status.OK, f"{gpu.name} (sm_{cc}) runs torch's {entry} kernels "
                               f"(built for {built})", device=gpu.device))
        elif how == "ptx":
            out.append(outcome(Status.OK, f"{gpu.name} (sm_{cc}) has no cubin in {built}, but the driver "
                               f"compiles torch's {entry} PTX for it (slow first start; torch still warns "
                               "'not compatible')", device=gpu.device, via="ptx"))
        else:
            out.append(outcome(Status.AFFECTED, f"{gpu.name} is sm_{cc}, and {torch_label(facts)} was built "
                               f"for {built} (no PTX to fall back on): every CUDA kernel fails with 'no "
                               "kernel image is available for execution on the device'", device=gpu.device,
                               capability=f"sm_{cc}", arch_list=list(archs)))
    return out


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan torch==2.6.0 --gpu sm_120`: the GPU against the architectures each planned build was
    compiled for, as the release snapshot read them from the wheel (libtorch_python.so's arch list,
    confirmed by libtorch_cuda.so's fat binaries)."""
    torch = inp.package("torch")
    if torch is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not in the plan", Basis.VERSION)]
    if inp.gpu_sm is None:
        return unpredictable("it needs the GPU (--gpu, e.g. --gpu sm_120)",
                             with_option("--gpu sm_XX", "torch-gpu-arch-missing"))
    if not torch.version_known:
        return [RuleOutcome(Status.INCONCLUSIVE, "the planned torch version is unknown; pin it to decide",
                            Basis.VERSION)]
    hits, misses, unknown = [], [], []
    for version in torch.candidates:
        v = inp.torch_variant(version)
        if v is None or (v["build"] == "cuda" and not v.get("archs")):
            unknown.append(version)
            continue
        if v["build"] != "cuda":
            hits.append(f"torch {version} ({v['source']}) has no CUDA kernels (see torch-cpu-only-build)")
            continue
        archs = v["archs"]
        how, entry = support(inp.gpu_sm, archs)
        label = f"torch {version} ({v['variant']}, {v['source']})"
        if how == "none":
            hits.append(f"{label} was built for {' '.join(archs)}: sm_{inp.gpu_sm} has no kernel and no PTX "
                        "to fall back on ('no kernel image is available for execution on the device')")
        elif how == "cubin":
            misses.append(f"{label} runs on sm_{inp.gpu_sm} with its {entry} kernels")
        else:
            misses.append(f"{label} runs on sm_{inp.gpu_sm}: the driver JIT-compiles its {entry} PTX")
    why = (f"the GPU architectures of torch {unknown[0]} ({inp.variant or 'PyPI'}) are not in the release "
           "snapshot") if unknown else None
    return planned_outcome(hits, misses, why)
