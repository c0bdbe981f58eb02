"""Triton's ptxas predates the GPU: "Value 'sm_120' is not defined for option 'gpu-name'".

Each ptxas release knows the GPU architectures of its time (sm_90 from CUDA 11.8, sm_100/sm_120
from 12.8, sm_103/sm_121 from 12.9, sm_110 from 13.0) and, since 13.0, no longer those before
Turing (sm_70, sm_72) nor sm_101 (renamed sm_110). A Triton whose ptxas does not know the GPU
(Blackwell, DGX Spark, Thor; Volta under a CUDA 13 ptxas) fails every kernel at assembly. The rule
works out which ptxas Triton runs for each GPU (`kb/_ptxas.py`) and asks that binary, with the
`--gpu-name` Triton passes; where it cannot run here, the release audit's run of the same bundled
binary answers, else the table of CUDA releases below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.core.plan_input import unpredictable, with_option
from inductor_doctor.kb._catalog import dotted, no_gpu, outcome, version_tuple
from inductor_doctor.kb._gpus import gpus_with_capability
from inductor_doctor.kb._ptxas import knows_arch, missing, planned_ptxas, ptxas_for
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: The first CUDA release whose ptxas accepts each architecture (CUDA toolkit release notes;
#: consistent with every bundled ptxas the release audit ran: `tools/release_audit.py check`).
FIRST_PTXAS: Dict[int, Tuple[int, int]] = {
    70: (9, 0), 72: (10, 0), 75: (10, 0), 80: (11, 0), 86: (11, 1), 87: (11, 4), 89: (11, 8),
    90: (11, 8), 100: (12, 8), 101: (12, 8), 103: (12, 9), 110: (13, 0), 120: (12, 8), 121: (12, 9),
}  # fmt: skip

#: The first CUDA release whose ptxas no longer accepts it: CUDA 13.0 dropped offline compilation
#: for Maxwell, Pascal and Volta, and renamed sm_101 to sm_110 (CUDA 13.0 release notes).
LAST_PTXAS: Dict[int, Tuple[int, int]] = {70: (13, 0), 72: (13, 0), 101: (13, 0)}


def release_knows(release: Tuple[int, ...], arch: int) -> Optional[bool]:
    """Whether a ptxas of CUDA `release` knows `arch`, by the tables above; None off the table."""
    if arch not in FIRST_PTXAS:
        return None
    return FIRST_PTXAS[arch] <= release[:2] < LAST_PTXAS.get(arch, (99, 0))


def _since(arch: int) -> str:
    last = f", until CUDA {dotted(LAST_PTXAS[arch])}" if arch in LAST_PTXAS else ""
    return f"CUDA {dotted(FIRST_PTXAS[arch])}{last}"


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --gpu sm_120 triton==3.2.0`: the bundled ptxas of each planned Triton, as the release
    audit ran it, against the `--gpu-name` that Triton passes for the GPU."""
    arch = inp.gpu_sm
    if inp.package("triton") is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "Triton is not in the plan", Basis.VERSION)]
    if arch is None:
        return unpredictable("it needs the GPU (--gpu)", with_option("--gpu sm_XX", "ptxas-unsupported-arch"))
    triton = inp.package("triton")
    if triton is None or not triton.version_known:
        return [RuleOutcome(Status.INCONCLUSIVE, "the planned Triton version is unknown; pin it to decide",
                            Basis.VERSION)]
    refused: List[str] = []
    accepted: List[str] = []
    unknown: List[str] = []
    for version, entry, key, binary in planned_ptxas(triton.candidates, arch, unknown):
        suffix = entry.get("arch_suffix")
        name = f"sm_{arch}a" if (suffix == ">=90" and arch >= 90) or (suffix == "==90" and arch == 90) \
            else f"sm_{arch}"
        answer = binary["archs"].get(name) if binary else None
        if answer is None:
            unknown.append(version)
            continue
        which = f"triton {version}'s {key.replace('_', '-')} (CUDA {binary['version']})"
        (accepted if answer else refused).append(f"{which} {'assembles' if answer else 'refuses'} {name}")
    if refused and not accepted and not unknown:
        return [RuleOutcome(Status.AFFECTED, "; ".join(refused[:2]), Basis.VERSION)]
    if refused:
        return [RuleOutcome(Status.LIKELY, f"{refused[0]} (of the planned Triton releases)", Basis.VERSION)]
    if unknown:
        return [RuleOutcome(Status.INCONCLUSIVE, f"triton {', '.join(unknown[:3])} is not in the release "
                            "snapshot; run `inductor-doctor check` once installed", Basis.VERSION)]
    return [RuleOutcome(Status.OK, "; ".join(accepted[:2]), Basis.VERSION)]


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if not facts.gpus:
        return no_gpu()
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        arch = cap[0] * 10 + cap[1]
        if arch < 70:
            out.append(outcome(Status.NOT_APPLICABLE, f"{gpu.name} is sm_{arch}, below what Triton "
                               "supports at all (see gpu-too-old-for-triton)", device=gpu.device))
            continue
        ptxas = ptxas_for(facts, arch)
        if ptxas.path is None and ptxas.release is None:
            out.append(outcome(Status.INCONCLUSIVE, f"{ptxas.source} ({gpu.name})", device=gpu.device))
            continue
        if missing(ptxas):
            shadow = facts.triton.shadowed_install
            why = (f"; `import triton` finds {facts.triton.path}, not the installed one (see triton-missing)"
                   if shadow else "")
            out.append(outcome(Status.INCONCLUSIVE, f"the ptxas Triton runs for sm_{arch} ({ptxas.source}) "
                               f"is not there: {ptxas.path}{why}", device=gpu.device))
            continue
        rv = version_tuple(ptxas.release, 2)
        name = ptxas.gpu_name or f"sm_{arch}"
        label = (f"the ptxas Triton runs for sm_{arch} ({ptxas.source}, "
                 f"{'CUDA ' + dotted(rv) if rv else 'release unknown'}, {ptxas.path or 'not found'})")
        if ptxas.ignored:
            label += f" [{ptxas.ignored}]"
        known, how = knows_arch(facts, ptxas, arch)
        basis = Basis.STATIC if how.startswith("`ptxas") else Basis.VERSION
        if known is True:
            out.append(outcome(Status.OK, f"{label} accepts {name} ({gpu.name}): {how}", basis,
                               device=gpu.device))
        elif known is False:
            status = Status.AFFECTED if basis is Basis.STATIC else Status.LIKELY
            out.append(outcome(status, f"{label} does not know {name} ({gpu.name}): every kernel fails with "
                               f"\"Value '{name}' is not defined for option 'gpu-name'\" ({how})", basis,
                               device=gpu.device, arch=name, ptxas=ptxas.path))
        elif rv is None or release_knows(rv, arch) is None:
            out.append(outcome(Status.INCONCLUSIVE, f"cannot tell whether {label} supports sm_{arch}",
                               device=gpu.device))
        elif not release_knows(rv, arch):
            out.append(outcome(Status.LIKELY, f"{label} does not know sm_{arch} by its release: sm_{arch} "
                               f"needs {_since(arch)} ({gpu.name})", Basis.VERSION, device=gpu.device))
        else:
            out.append(outcome(Status.OK, f"{label} supports sm_{arch} by its release ({_since(arch)})",
                               Basis.VERSION, device=gpu.device))
    return out
