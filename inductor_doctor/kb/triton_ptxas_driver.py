"""The NVIDIA driver is older than the CUDA of Triton's ptxas: kernels fail to load.

Triton assembles its PTX with the ptxas it runs for the GPU (`kb/_ptxas.py`: its bundled `ptxas`,
or `ptxas-blackwell` from sm_100 on in 3.3 and 3.6-3.8 and from sm_90 on in 3.9, or the override
it reads for that GPU) and hands the cubin to the driver. A driver of an older CUDA major release
than that ptxas (driver 470 = CUDA 11.4 against a CUDA 12 ptxas; driver 570 = CUDA 12.8 against
the CUDA 13 `ptxas-blackwell` of Triton 3.7 and later) rejects the image: `Triton Error [CUDA]:
device kernel image is invalid`, or, for PTX, `the provided PTX was compiled with an unsupported
toolchain`. Within one major release, CUDA's minor-version compatibility lets an older driver load
the newer cubin. The versions predict it; only loading a kernel tells, so the canary launches a
one-element Triton kernel on each GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.kb._catalog import dotted, gpu_sm, no_gpu, outcome, version_tuple
from inductor_doctor.kb._gpus import hidden_reason
from inductor_doctor.kb._ptxas import missing, planned_ptxas, ptxas_for
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, GPUInfo
    from inductor_doctor.core.plan_input import PlanInput


def _arch(gpu: GPUInfo) -> Optional[int]:
    cap = gpu_sm(gpu)
    return cap[0] * 10 + cap[1] if cap else None


def needed_driver(ptxas_cuda: Tuple[int, ...]) -> str:
    """What a driver must be to load this ptxas's cubins: one of its CUDA major release."""
    from inductor_doctor.core.releases import CUDA_MIN_DRIVER, family_driver

    release = dotted(ptxas_cuda[:2])
    family = family_driver(release)
    own = CUDA_MIN_DRIVER.get(release)
    text = f"a CUDA {ptxas_cuda[0]}.x driver (>= {family}" if family else f"a CUDA {ptxas_cuda[0]}.x driver ("
    if own and own != family:
        text += f"; CUDA {release}'s own toolkit driver is {own}"
    return text + ")"


def _driver_cuda(facts: Facts) -> Optional[Tuple[int, ...]]:
    """The CUDA release the driver supports: nvidia-smi's, else the newest whose toolkit driver
    the installed one is at least (NVIDIA's table), else (older than every entry) CUDA 11."""
    dv = version_tuple(facts.cuda.driver_cuda_version, 2)
    if dv is None and facts.cuda.driver_version:
        from inductor_doctor.core.releases import CUDA_MIN_DRIVER, cuda_of_driver

        dv = version_tuple(cuda_of_driver(facts.cuda.driver_version), 2)
        have = version_tuple(facts.cuda.driver_version, 3)
        if dv is None and have is not None and have < version_tuple(CUDA_MIN_DRIVER["12.0"], 3):
            dv = (11, 0)  # below 12.0's driver: CUDA 11 at most; the major release is what counts
    return dv


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if not facts.gpus and not facts.cuda.driver_version:
        return no_gpu("no NVIDIA driver here: Triton's kernels are loaded only on a GPU")
    hidden = hidden_reason(facts)
    if hidden:
        return no_gpu(f"{hidden}: no Triton kernel is loaded")
    dv = _driver_cuda(facts)
    shown = "11.x or older" if dv == (11, 0) and not facts.cuda.driver_cuda_version else dotted(dv or ())
    drv = f"driver {facts.cuda.driver_version or '?'}" + (f" (CUDA {shown})" if dv else "")
    targets: List[Tuple[Optional[str], Optional[int]]] = [(g.device, _arch(g)) for g in facts.gpus]
    out = []
    for device, arch in targets or [(None, None)]:
        ptxas = ptxas_for(facts, arch)
        pv = version_tuple(ptxas.release, 2)
        which = f"sm_{arch}" if arch is not None else "its default target"
        note = f"; {ptxas.ignored}" if ptxas.ignored else ""
        if missing(ptxas):  # the snapshot's release of a file that is not there proves nothing
            out.append(outcome(Status.INCONCLUSIVE, f"the ptxas Triton runs for {which} ({ptxas.source}) "
                               f"is not there: {ptxas.path}", device=device))
        elif pv is None:
            out.append(outcome(Status.INCONCLUSIVE, "could not determine the CUDA release of the ptxas "
                               f"Triton runs for {which} ({ptxas.source}){note}", device=device))
        elif dv is None:
            out.append(outcome(Status.INCONCLUSIVE, f"Triton's ptxas for {which} is CUDA {dotted(pv)} "
                               f"({ptxas.source}); the CUDA version the driver supports is unknown",
                               device=device))
        elif dv[0] < pv[0]:
            out.append(outcome(Status.LIKELY, f"{drv} is older than the CUDA {dotted(pv)} ptxas Triton "
                               f"runs for {which} ({ptxas.source}: {ptxas.path}): the driver will reject its "
                               f"kernels ('device kernel image is invalid'); it needs "
                               f"{needed_driver(pv)}{note}",
                               Basis.VERSION, device=device, ptxas=ptxas.path, ptxas_cuda=dotted(pv),
                               driver_cuda=dotted(dv)))
        elif dv < pv:
            out.append(outcome(Status.OK, f"{drv} and the CUDA {dotted(pv)} ptxas Triton runs for {which} "
                               f"({ptxas.source}) share a major release (minor-version compatibility)",
                               Basis.VERSION, device=device))
        else:
            out.append(outcome(Status.OK, f"{drv} is at least as new as the CUDA {dotted(pv)} ptxas Triton "
                               f"runs for {which} ({ptxas.source})", Basis.VERSION, device=device))
    return out


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --gpu sm_90 --driver 570.86.15 triton==3.9.0`: the bundled ptxas each planned Triton
    runs for the GPU, as the release audit read it, against the driver's CUDA major release."""
    from inductor_doctor.core.releases import family_driver

    triton = inp.package("triton")
    if triton is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "Triton is not in the plan", Basis.VERSION)]
    if inp.driver is None:
        return unpredictable("it needs the driver (--driver)",
                             with_option("--driver VER (nvidia-smi's driver version)", "triton-ptxas-driver"))
    if not triton.version_known:
        return [RuleOutcome(Status.INCONCLUSIVE, "the planned Triton version is unknown; pin it to decide",
                            Basis.VERSION)]
    have = version_tuple(inp.driver, 3)
    arch = inp.gpu_sm
    newer: List[str] = []
    fine: List[str] = []
    unknown: List[str] = []
    for version, _, key, binary in planned_ptxas(triton.candidates, arch, unknown):
        pv = version_tuple(binary["release"], 2) if binary else None
        floor = family_driver(binary["release"]) if binary else None
        if pv is None or floor is None or have is None:
            unknown.append(version)
        elif have < version_tuple(floor, 3):
            newer.append(f"triton {version} runs a CUDA {dotted(pv)} {key.replace('_', '-')} for "
                         f"{'sm_' + str(arch) if arch else 'the GPU'}; driver {inp.driver} is older than "
                         f"{needed_driver(pv)}")
        else:
            fine.append(version)
    if newer:
        status = Status.AFFECTED if not fine and not unknown else Status.LIKELY
        return [RuleOutcome(status, newer[0], Basis.VERSION)]
    if unknown:
        return [RuleOutcome(Status.INCONCLUSIVE, f"triton {', '.join(unknown[:3])} is not in the release "
                            "snapshot", Basis.VERSION)]
    gpu = "" if arch is not None else " (pass --gpu: Triton 3.3 and later pick the ptxas per GPU)"
    return [RuleOutcome(Status.OK, f"driver {inp.driver} loads what the planned Triton's ptxas builds{gpu}",
                        Basis.VERSION)]
