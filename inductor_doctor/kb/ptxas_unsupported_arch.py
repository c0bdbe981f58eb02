"""Triton's ptxas predates the GPU: "Value 'sm_120' is not defined for option 'gpu-name'".

Each ptxas release knows the GPU architectures that existed when it shipped (sm_90 from CUDA 11.8,
sm_100/sm_120 from 12.8, sm_103/sm_121 from 12.9, sm_110 from 13.0). A Triton bundling an older
ptxas than the GPU (Blackwell, DGX Spark, Thor) fails every kernel at assembly. The names a ptxas
accepts are plain strings in its executable, so the rule reads the binary Triton would run and
looks for `sm_<NN>`; where it cannot, it falls back to the release table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Tuple

from inductor_doctor.kb._catalog import dotted, gpu_sm, no_gpu, outcome, version_tuple
from inductor_doctor.kb._ptxas import knows_arch, ptxas_for
from inductor_doctor.kb._rules import not_installed
from inductor_doctor.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.plan.inputs import PlanInput
    from inductor_doctor.probe.facts import Facts

#: The first CUDA release whose ptxas accepts each architecture (CUDA toolkit release notes).
FIRST_PTXAS: Dict[int, Tuple[int, int]] = {
    70: (9, 0), 72: (10, 0), 75: (10, 0), 80: (11, 0), 86: (11, 1), 87: (11, 4), 89: (11, 8),
    90: (11, 8), 100: (12, 8), 101: (12, 8), 103: (12, 9), 110: (13, 0), 120: (12, 8), 121: (12, 9),
}  # fmt: skip


#: `plan`: the CUDA release of the ptxas each Triton release bundles (read from the wheels), as
#: (triton specifier, release for < sm_100, release for sm_100 and newer).
BUNDLED: Tuple[Tuple[str, Tuple[int, int], Tuple[int, int]], ...] = (
    (">=3.1,<3.3", (12, 4), (12, 4)),
    (">=3.3,<3.4", (12, 4), (12, 8)),
)


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan --gpu sm_120 triton==3.2.0`: the bundled ptxas of the planned Triton against the GPU."""
    arch = inp.gpu_sm
    if arch is None or inp.package("triton") is None:
        return [RuleOutcome(Status.NOT_APPLICABLE, "needs --gpu and a Triton in the plan", Basis.VERSION)]
    if arch not in FIRST_PTXAS:
        return [RuleOutcome(Status.INCONCLUSIVE, f"sm_{arch} is not in the doctor's ptxas table",
                            Basis.VERSION)]
    need = FIRST_PTXAS[arch]
    for spec, low, high in BUNDLED:
        bundled = high if arch >= 100 else low
        judged = inp.judge("triton", spec)
        if judged.share in ("all", "some") and bundled < need:
            return [RuleOutcome(judged.status, f"triton{spec} bundles a CUDA {dotted(bundled)} ptxas for "
                                f"sm_{arch}, which needs CUDA {dotted(need)}", Basis.VERSION)]
        if judged.share == "all":
            return [RuleOutcome(Status.OK, f"triton{spec} bundles a CUDA {dotted(bundled)} ptxas for "
                                f"sm_{arch}", Basis.VERSION)]
    return [RuleOutcome(Status.INCONCLUSIVE, "the bundled ptxas of the planned Triton is not in the "
                        "doctor's table; run `inductor-doctor check` once installed", Basis.VERSION)]


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if not facts.gpus:
        return no_gpu()
    out = []
    for gpu in facts.gpus:
        cap = gpu_sm(gpu)
        if cap is None:
            out.append(outcome(Status.INCONCLUSIVE, f"{gpu.name}: compute capability unknown",
                               device=gpu.device))
            continue
        arch = cap[0] * 10 + cap[1]
        if arch < 70:
            out.append(outcome(Status.NOT_APPLICABLE, f"{gpu.name} is sm_{arch}, below what Triton "
                               "supports at all (see gpu-too-old-for-triton)", device=gpu.device))
            continue
        ptxas = ptxas_for(facts, arch)
        rv = version_tuple(ptxas.release, 2)
        label = (f"the ptxas Triton runs for sm_{arch} ({ptxas.source}, "
                 f"{'CUDA ' + dotted(rv) if rv else 'release unknown'}, {ptxas.path or 'not found'})")
        known = knows_arch(ptxas, arch)
        if known is True:
            out.append(outcome(Status.OK, f"{label} accepts sm_{arch} ({gpu.name})", device=gpu.device))
        elif known is False:
            out.append(outcome(Status.AFFECTED, f"{label} does not know sm_{arch} ({gpu.name}): every "
                               f"kernel fails with \"Value 'sm_{arch}' is not defined for option "
                               "'gpu-name'\"", device=gpu.device, arch=f"sm_{arch}", ptxas=ptxas.path))
        elif rv is None or arch not in FIRST_PTXAS:
            out.append(outcome(Status.INCONCLUSIVE, f"cannot tell whether {label} supports sm_{arch}",
                               device=gpu.device))
        elif rv < FIRST_PTXAS[arch]:
            out.append(outcome(Status.LIKELY, f"{label} is older than CUDA {dotted(FIRST_PTXAS[arch])}, "
                               f"the first to support sm_{arch} ({gpu.name})", Basis.VERSION,
                               device=gpu.device))
        else:
            out.append(outcome(Status.OK, f"{label} supports sm_{arch} (since CUDA "
                               f"{dotted(FIRST_PTXAS[arch])})", Basis.VERSION, device=gpu.device))
    return out


ISSUE = KnownIssue(
    id="ptxas-unsupported-arch",
    title="Triton's ptxas does not know the GPU: \"Value 'sm_120' is not defined for option 'gpu-name'\"",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "triton-lang/triton#8539",
        "fishaudio/fish-speech#907",
        "triton-inference-server/server#8632",
    ),
    aliases=("gpu-name-not-defined", "sm_120", "blackwell-ptxas"),
    summary=(
        "The ptxas that Triton bundles (or that TRITON_PTXAS_PATH names) must know the GPU's "
        "architecture. On a GPU newer than that ptxas (RTX 50xx/B200 = sm_120/sm_100 need CUDA 12.8, "
        "DGX Spark sm_121 needs 12.9, Thor sm_110 needs 13.0) every Triton kernel, and so every GPU "
        "torch.compile, fails with `ptxas fatal : Value 'sm_120a' is not defined for option 'gpu-name'`."
    ),
    signatures=(
        Signature(r"Value '?sm_\d+[a-z]?'? is not defined for option '?gpu-name'?",
                  note="ptxas older than the GPU architecture"),
        Signature(r"ptxas fatal\s*:.*gpu-name", strength="partial"),
    ),
    workarounds=(
        Workaround("Point Triton at the ptxas of a CUDA toolkit that knows the GPU (12.8 for sm_100/120, "
                   "12.9 for sm_103/121, 13.0 for sm_110); for sm_100 and newer, Triton >= 3.3 reads "
                   "TRITON_PTXAS_BLACKWELL_PATH instead of TRITON_PTXAS_PATH",
                   "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas "
                   "TRITON_PTXAS_BLACKWELL_PATH=/usr/local/cuda/bin/ptxas", "env"),
        Workaround("Or upgrade torch and its Triton together to a release whose bundled ptxas supports "
                   "the GPU (Triton 3.3 adds a CUDA 12.8 ptxas for sm_100 and newer)", None, "upgrade"),
    ),
    rule=rule,
    predict=predict,
)
