"""A compiled artifact's CPU kernels use instructions this CPU lacks: "Illegal instruction".

Inductor compiles CPU kernels for the vector ISA it picks on the build host (AOTInductor records it
as AOTI_CPU_ISA: "AVX512 AVX512_VNNI"), and with `-march=native`, so the compiler may use any
instruction of the build CPU anywhere. Loaded on a CPU without them, the package loads and then dies
with SIGILL in its first kernel. The flags are read from the package's metadata and from the
compiler's command line in the `.so`'s debug info, and compared with /proc/cpuinfo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.artifact.host import GCC_TO_CPUINFO, VEC_ISA_FLAGS
from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._artifacts import is_cache, no_artifact, outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts


def judge_artifact(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
    if art.machine and host.machine and art.machine != host.machine:
        return outcome(
            Status.AFFECTED,
            f"{art.name} was built for {art.machine}, {host.what} is "
            f"{host.machine}: its .so cannot be loaded (wrong ELF class or machine)",
        )
    flags = host.cpu_flags
    words = (art.cpu_isa or "").split()
    built = sorted({f for o in art.objects for f in o.isa_flags})
    if flags is None or (not words and not built):
        return None
    have = set(flags)
    vector: List[str] = []
    for word in words:
        vector += [f for f in VEC_ISA_FLAGS.get(word.upper(), []) if f not in have]
    cache = " if one of its kernels is loaded" if is_cache(art) else ""
    status = Status.LIKELY if is_cache(art) else Status.AFFECTED
    if vector:
        return outcome(
            status,
            f"{art.name}'s kernels were built for {art.cpu_isa} (AOTI_CPU_ISA), but this "
            f"CPU lacks {', '.join(vector)}: the first kernel dies with SIGILL (Illegal "
            f"instruction){cache}",
            lacks=vector,
        )
    lacking = sorted({GCC_TO_CPUINFO[f] for f in built if f in GCC_TO_CPUINFO} - have)
    march = next((o.march for o in art.objects if o.march), None)
    if lacking:
        return outcome(
            Status.LIKELY,
            f"{art.name} was compiled with -march={march or '?'}, which lets the "
            f"compiler use {', '.join(lacking[:6])}{' ...' if len(lacking) > 6 else ''} that "
            f"this CPU lacks: a kernel that does dies with SIGILL{cache}",
            lacks=lacking,
        )
    said = art.cpu_isa or (f"-march={march}" if march else "its flags")
    return outcome(Status.OK, f"this CPU has every instruction set {art.name} was built for ({said})")


#: The issue's rule and plan hook (the loader takes them by name): a plain check or plan has no
#: artifact to compare; `check --artifact` asks `judge_artifact` about each artifact (in `load_order`).
rule = no_artifact
predict = no_artifact
