"""A compiled CUDA artifact has no code for this GPU: "no kernel image is available".

An AOTInductor CUDA package carries its kernels as cubins (one GPU architecture each) and, where
it was built so, PTX that the driver can compile for a newer GPU. A cubin for sm_XY runs on GPUs of
the same major version and a minor version at least Y (sm_90a only on 9.0); PTX for compute_XY on
any GPU of XY or newer. The architectures are read from the `.nv_fatbin` sections of its `.so` files
and the `e_flags` of its cubins (and, failing both, its AOTI_COMPUTE_CAPABILITY); the GPUs are the
probe's, or `plan --gpu`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._artifacts import is_cache, no_artifact, outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts

_ARCH = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


def _parse(arch: str) -> Optional[Tuple[str, int, int, str]]:
    m = _ARCH.match(arch)
    return (m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)) if m else None


def runs_on(arch: str, major: int, minor: int) -> bool:
    """Whether code for `arch` (sm_86, compute_90, sm_90a) runs on a GPU of major.minor."""
    p = _parse(arch)
    if p is None:
        return False
    kind, a_major, a_minor, suffix = p
    if suffix:  # arch-specific (sm_90a) or family (sm_100f) code: that GPU only, or its family
        return (
            (a_major, a_minor) == (major, minor) if suffix == "a" else a_major == major and minor >= a_minor
        )
    if kind == "compute":
        return (major, minor) >= (a_major, a_minor)
    return major == a_major and minor >= a_minor


def code_of(art: ArtifactFacts) -> Tuple[List[str], str]:
    archs = art.cuda_archs() + art.ptx_archs()
    if archs:
        return archs, "its cubins and PTX"
    targets = art.metadata.get("triton_targets", "")
    if targets:
        return targets.split(), "its Triton kernels' targets"
    cc = (art.compute_capability or "").strip()
    if cc.isdigit():
        return [f"sm_{cc}"], f"AOTI_COMPUTE_CAPABILITY {cc} (no cubin or PTX header was found)"
    return [], ""


def judge_artifact(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
    if (art.device or "") != "cuda":
        return None
    archs, where = code_of(art)
    if not host.gpus:
        if host.planned:
            return None
        return outcome(Status.AFFECTED, f"{art.name} is a CUDA artifact and {host.what} has no CUDA GPU")
    if not archs:
        return outcome(
            Status.INCONCLUSIVE, f"{art.name} targets CUDA, but no GPU architecture could be read from it"
        )
    bad, good = [], []
    for device, sm in sorted(host.gpus.items()):
        try:
            major, minor = (int(x) for x in (sm or "").split(".")[:2])
        except ValueError:
            continue
        (good if any(runs_on(a, major, minor) for a in archs) else bad).append(
            f"{device} (sm_{major}{minor})"
        )
    if bad:
        status = Status.LIKELY if is_cache(art) else Status.AFFECTED
        tail = (
            ": its kernels will be compiled again (a cache miss)"
            if is_cache(art)
            else ': launching its kernels fails with "no kernel image is available for execution on the '
            'device"'
        )
        return outcome(
            status,
            f"{art.name} has code for {' '.join(archs)} ({where}), none of which runs on "
            f"{', '.join(bad)}{tail}",
            gpus=bad,
            archs=archs,
        )
    if not good:
        return None
    return outcome(Status.OK, f"{' '.join(archs)} ({where}) runs on {', '.join(good)}")


#: The issue's rule and plan hook (the loader takes them by name): a plain check or plan has no
#: artifact to compare; `check --artifact` asks `judge_artifact` about each artifact (in `load_order`).
rule = no_artifact
predict = no_artifact
