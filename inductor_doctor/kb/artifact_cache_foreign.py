"""A compile cache made by another torch, Triton or GPU: every entry is missed, silently.

Inductor's and AOTAutograd's cache keys hash torch's version and source, Triton's version, the GPU
and the compiler; Triton's, its own version and the GPU architecture. A cache blob or directory made
elsewhere loads without an error and is then never hit: the first run compiles everything again.
Nothing fails, so `likely` (a recompile) is the verdict, never `affected`. What built it is read from
the repro header its entries carry ("# torch version: 2.13.0+cpu", "# torch git version: ...") and
from its Triton kernels' targets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

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
from inductor_doctor.kb._artifacts import host_torch, is_cache, no_artifact, outcome, torch_of

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts


def _public(v: Optional[str]) -> str:
    return (v or "").split("+")[0]


def judge(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
    if not is_cache(art):
        return None
    layout = art.metadata.get("blob_layout")
    release = _public(host.torch_version).split(".")[:2]
    if not art.torch_version and layout and host.torch_version and release != layout.split("."):
        return outcome(
            Status.LIKELY,
            f"{art.name} is in torch {layout}'s blob layout, which {host_torch(host)} cannot read: "
            "load_cache_artifacts warns and returns None, every entry will be missed and compiled "
            "again (a cache miss, not an error)",
        )
    if not art.torch_version:
        return outcome(
            Status.INCONCLUSIVE,
            f"{art.name} records no torch version: whether {host_torch(host)} "
            "will hit its entries is unknown",
        )
    if not host.torch_version:
        return None
    same_release = art.torch_version == host.torch_version or (
        _public(art.torch_version) == _public(host.torch_version) and host.planned
    )
    if not same_release:
        return outcome(
            Status.LIKELY,
            f"{art.name} was written by {torch_of(art)}, {host.what} has "
            f"{host_torch(host)}: its keys will not match, every entry will be missed and "
            "compiled again (a cache miss, not an error)",
        )
    if art.torch_git and host.torch_git and art.torch_git != host.torch_git:
        return outcome(
            Status.LIKELY,
            f"{art.name} was written by another build of torch {art.torch_version} "
            f"(git {art.torch_git[:10]}, here {host.torch_git[:10]}): every entry will be missed",
        )
    return outcome(Status.OK, f"written by {torch_of(art)}, the torch {host.what} has: its keys can match")


ISSUE = KnownIssue(
    id="artifact-cache-foreign",
    title="A compile cache from another torch, Triton or GPU: every entry is silently missed",
    severity=Severity.WARNING,
    devices=(DeviceKind.CPU, DeviceKind.CUDA),
    upstream=("pytorch/pytorch#170123", "pytorch/pytorch#144859", "pytorch/pytorch#154463"),
    aliases=("cache-miss", "mega-cache-miss", "foreign-cache"),
    summary=(
        "A torch.compile cache (a save_cache_artifacts() blob, or an Inductor/Triton cache directory baked "
        "into an image or shared on NFS) made by another torch release or build, another Triton or another "
        "GPU loads without an error and is never hit: every start compiles again. `check --artifact` reads "
        "which torch wrote it and says whether this one can hit it."
    ),
    signatures=(
        Signature(
            r"FX (graph )?cache miss|AOTAutograd cache miss",
            strength="partial",
            note="a compile cache lookup missed",
        ),
    ),
    workarounds=(
        Workaround(
            "Make the cache with the exact torch, Triton and GPU that will read it (the same image)",
            None,
            "other",
        ),
    ),
    rule=no_artifact,
    predict=no_artifact,
    canary=Canary("artifact_load.py", (DeviceKind.CPU, DeviceKind.CUDA), timeout_s=300.0),
)
