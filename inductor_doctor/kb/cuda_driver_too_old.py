"""The NVIDIA driver is too old for the CUDA torch was built with.

torch's CUDA runtime asks the driver for the GPUs; a driver of an older CUDA *major* release
answers cudaErrorInsufficientDriver, and torch reports "The NVIDIA driver on your system is too old
(found version 11040)" (c10/cuda/CUDAFunctions.cpp): `torch.cuda.is_available()` is False, and
anything on the GPU raises it. Within a major release CUDA's minor-version compatibility applies
(NVIDIA, "CUDA Compatibility", Minor Version Compatibility): a 12.x runtime runs on any >= 525
driver, a 13.x runtime on any >= 580, an 11.x on any >= 450.80.02, "with limited feature-set":
what needs the newer driver is JIT-compiling PTX of the newer toolkit, which the driver refuses
("the provided PTX was compiled with an unsupported toolchain"). torch's own kernels are cubins,
so that only bites on a GPU torch has no cubin for (see torch-gpu-arch-missing), where the driver
must JIT torch's PTX.

The driver's versions are read from /proc and nvidia-smi; the live probe adds torch's own verdict.
A data-center "forward compatibility" package (cuda-compat) can make a newer CUDA run on an older
driver, which the versions cannot see: a prediction from versions is `likely`, the live torch's
answer is conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.core.releases import CUDA_MIN_DRIVER
from inductor_doctor.kb._catalog import dotted, gpu_sm, one, outcome, torch_label, version_tuple
from inductor_doctor.kb._gpus import support
from inductor_doctor.kb._rules import not_cuda_torch, planned_outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: NVIDIA's minor-version-compatibility floors per CUDA major (CUDA Compatibility, Table 1); where
#: core/releases.py has the toolkit's own minimum for `<major>.0`, that one is used.
MINOR_COMPAT_FLOOR = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}


def major_floor(major: int) -> Optional[str]:
    return CUDA_MIN_DRIVER.get(f"{major}.0") or MINOR_COMPAT_FLOOR.get(major)


def driver_cuda(driver_version: Optional[str]) -> Optional[Tuple[int, int]]:
    """The newest CUDA a Linux driver supports fully, from the toolkit table (None: unknown)."""
    dv = version_tuple(driver_version, 3)
    if dv is None:
        return None
    best = None
    for cuda, need in CUDA_MIN_DRIVER.items():
        nv = version_tuple(need, 3)
        cv = version_tuple(cuda, 2)
        if nv is not None and cv is not None and dv >= nv and (best is None or cv > best):
            best = (cv[0], cv[1])
    return best


def rule(facts: Facts) -> List[RuleOutcome]:
    not_cuda = not_cuda_torch(facts, "does not use the NVIDIA driver")
    if not_cuda:
        return not_cuda
    t = facts.torch
    cuda = facts.cuda
    if not cuda.driver_version and not cuda.driver_cuda_version and not cuda.driver_gpus:
        return one(Status.NOT_APPLICABLE, "no NVIDIA driver here")
    tv = version_tuple(t.cuda, 2)
    drv = f"driver {cuda.driver_version or '?'}"
    if cuda.driver_sufficient is False:
        found = cuda.driver_api_version
        said = f" (found version {found})" if found else ""
        return one(Status.AFFECTED, f"the live torch says the NVIDIA driver is too old{said} for its CUDA "
                   f"{t.cuda}: torch.cuda.is_available() is False")
    dv = version_tuple(cuda.driver_cuda_version, 2) or driver_cuda(cuda.driver_version)
    if tv is None or dv is None:
        return one(Status.INCONCLUSIVE, f"cannot compare {drv} (CUDA {cuda.driver_cuda_version or '?'}) "
                   f"with {torch_label(facts)}")
    drv += f" (CUDA {dotted(dv)})"
    if cuda.driver_sufficient is True:
        base = one(Status.OK, f"the live torch initialised CUDA {t.cuda} on {drv}")
    else:
        base = []
    if dv[0] < tv[0]:
        floor = major_floor(tv[0])
        need = f" (driver >= {floor})" if floor else ""
        return base or one(Status.LIKELY, f"{drv} is older than {torch_label(facts)} needs: CUDA {tv[0]}.x "
                           f"runs only on a CUDA {tv[0]} driver{need}, so torch reports 'The NVIDIA driver "
                           f"on your system is too old (found version {dv[0] * 1000 + dv[1] * 10})'",
                           Basis.VERSION, driver_cuda=dotted(dv), torch_cuda=t.cuda)
    if dv >= tv:
        return base or one(Status.OK, f"{drv} supports torch's CUDA {t.cuda}", Basis.VERSION)
    # Same major, older minor: minor-version compatibility, except for JIT of torch's PTX.
    out = []
    for gpu in facts.gpus:
        cap = gpu_sm(gpu)
        how, entry = support(cap[0] * 10 + cap[1], t.cuda_arch_list or []) if cap else ("?", None)
        if how == "ptx":
            out.append(outcome(Status.LIKELY, f"{gpu.name} has no cubin in torch and needs its {entry} PTX "
                               f"JIT-compiled, which {drv} refuses for CUDA {t.cuda} PTX ('the provided PTX "
                               "was compiled with an unsupported toolchain')", Basis.VERSION,
                               device=gpu.device))
        else:
            out.append(outcome(Status.OK, f"{drv} is older than torch's CUDA {t.cuda} but of the same major "
                               "release: minor-version compatibility", Basis.VERSION, device=gpu.device))
    return out or base or one(Status.OK, f"{drv} is older than torch's CUDA {t.cuda} but of the same "
                              "major release: minor-version compatibility", Basis.VERSION)


def _planned_cudas(inp: PlanInput) -> List[Tuple[str, str]]:
    """(CUDA release, what says so) per planned torch: the build the snapshot read, else `--cuda`."""
    torch = inp.package("torch")
    out: List[Tuple[str, str]] = []
    for version in (torch.candidates if torch is not None and torch.version_known else ()):
        v = inp.torch_variant(version)
        if v is not None and v["build"] == "cuda" and v.get("cuda"):
            out.append((v["cuda"], f"torch {version}'s {v['variant']} build ({v['source']})"))
    if not out and inp.cuda:
        out.append((inp.cuda, f"CUDA {inp.cuda}"))
    return out


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan torch==2.11.0 --driver 550.54`: the driver against the CUDA each planned build was
    made with (read from the wheel's METADATA into the release snapshot), or `--cuda`."""
    dv = version_tuple(inp.driver, 3)
    cudas = _planned_cudas(inp)
    if inp.package("torch") is None and inp.cuda is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "torch is not in the plan", Basis.VERSION)]
    if dv is None or not cudas:
        need = "the driver (--driver)" if cudas else "the CUDA of the torch build (--cuda) and the driver"
        option = "--driver VER (nvidia-smi's driver version)" if cudas else "--cuda X.Y --driver VER"
        return unpredictable(f"it needs {need}", with_option(option, "cuda-driver-too-old"))
    bad, good, unknown = [], [], []
    for cuda, what in cudas:
        tv = version_tuple(cuda, 2)
        floor = major_floor(tv[0]) if tv else None
        fv = version_tuple(floor, 3)
        if tv is None or fv is None:
            unknown.append(f"CUDA {cuda} is not in the doctor's driver table")
        elif dv < fv:
            bad.append(f"driver {inp.driver} is older than {floor}, the oldest that runs CUDA {tv[0]}.x, and "
                       f"{what} needs CUDA {cuda}: torch will report the driver too old")
        else:
            full = CUDA_MIN_DRIVER.get(dotted(tv))
            compat = "" if not full or dv >= version_tuple(full, 3) else \
                f" through minor-version compatibility (CUDA {dotted(tv)}'s own driver is {full})"
            good.append(f"driver {inp.driver} runs {what}: CUDA {cuda} needs >= {floor}{compat}")
    return planned_outcome(bad, good, unknown[0] if unknown else None)
