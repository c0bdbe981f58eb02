"""A compile cache made by another torch, Triton or GPU: every entry is missed, silently.

Inductor's and AOTAutograd's cache keys hash torch's version and source, Triton's version, the GPU
and the compiler; Triton's, its own version and the GPU architecture. A cache blob or directory made
elsewhere loads without an error and is then never hit: the first run compiles everything again.
Nothing fails, so `likely` (a recompile) is the verdict, never `affected`. What built it is read from
the repro header its entries carry ("# torch version: 2.13.0+cpu", "# torch git version: ...") and
from its Triton kernels' targets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._artifacts import host_torch, is_cache, no_artifact, outcome, torch_of

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts


def _public(v: Optional[str]) -> str:
    return (v or "").split("+")[0]


def judge_artifact(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
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
    skew = env_skew(art, host)
    if skew:
        return outcome(
            Status.LIKELY,
            f"{art.name} was compiled with other settings than {host.what}'s: " + "; ".join(skew)
            + f" ({art.sources.get('compile_env', 'its entries')}): every entry they key will be missed",
        )
    return outcome(Status.OK, f"written by {torch_of(art)}, the torch {host.what} has: its keys can match")


#: The variables a repro header records: names holding one of these (torch/_dynamo/debug_utils.py,
#: generate_env_vars_string's allow list, the same from torch 2.5 to 2.13).
RECORDED = ("TORCH", "DYNAMO", "INDUCTOR", "TRITON")


def env_skew(art: ArtifactFacts, host: HostView) -> List[str]:
    """The variables whose values give the artifact's compile and this host other keys: each as
    `NAME differs (1 in the cache, unset here)`. Nothing where the artifact records no environment or
    the host's torch cannot be read."""
    if art.compile_env is None or host.key_effect is None:
        return []
    names = sorted(set(art.compile_env) | {n for n in host.env if any(w in n for w in RECORDED)})
    out = []
    for name in names:
        theirs, ours = art.compile_env.get(name), host.env.get(name)
        if theirs == ours:
            continue
        a, b = host.key_effect(name, theirs), host.key_effect(name, ours)
        if (a is not None or b is not None) and a != b:
            out.append(f"{name} differs ({theirs if theirs is not None else 'unset'} in the cache, "
                       f"{ours if ours is not None else 'unset'} here)")
    return out


#: The issue's rule and plan hook (the loader takes them by name): a plain check or plan has no
#: artifact to compare; `check --artifact` asks `judge_artifact` about each artifact (in `load_order`).
rule = no_artifact
predict = no_artifact
