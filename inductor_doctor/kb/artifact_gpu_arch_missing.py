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

from inductor_doctor.core.model import (
    Canary,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
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


def judge(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
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


ISSUE = KnownIssue(
    id="artifact-gpu-arch-missing",
    title='A compiled CUDA artifact has no code for this GPU: "no kernel image is available for execution on '
    'the device"',
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=("pytorch/pytorch#153697",),
    aliases=("artifact-no-cubin", "aoti-gpu-arch"),
    summary=(
        "An AOTInductor CUDA package holds cubins for the GPU it was compiled on (and PTX only when built "
        "for it). On a GPU of another architecture, an A10-built package on an H20 say, its kernels do not "
        "launch: `CUDA error: no kernel image is available for execution on the device` (or a CUDA driver "
        "error when loading the cubin). `check --artifact` reads the architectures from the package's "
        "fatbins and cubins and compares them with each GPU here, or with `plan --gpu`."
    ),
    signatures=(
        Signature(
            r"(aoti|AOTI|\.pt2|aotinductor)[^\n]{0,300}(no kernel image is available|"
            r"CUDA_ERROR_NO_BINARY_FOR_GPU|device kernel image is invalid)|"
            r"(no kernel image is available|CUDA_ERROR_NO_BINARY_FOR_GPU)[^\n]{0,300}"
            r"(aoti_load|AOTI|\.pt2\b|aotinductor)",
            note="the artifact has no cubin or PTX this GPU can run",
        ),
    ),
    workarounds=(
        Workaround(
            "Compile the package on (or for) the GPU that serves it, one package per architecture",
            None,
            "other",
        ),
        Workaround(
            "Or embed PTX and a cubin per architecture (Inductor's aot_inductor.emit_multi_arch_kernel)",
            "inductor_configs={'aot_inductor.emit_multi_arch_kernel': True}",
            "code",
        ),
    ),
    rule=no_artifact,
    predict=no_artifact,
    canary=Canary("artifact_load.py", (DeviceKind.CUDA,), timeout_s=300.0),
)
