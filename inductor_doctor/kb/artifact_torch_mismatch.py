"""A compiled artifact needs a torch other than the one that would load it.

An AOTInductor `.so` calls torch through symbols (its C shim `aoti_torch_*`, and C++ symbols in
`c10::`, `at::`, `torch::`) that the torch that built it exports; a torch that lacks one cannot
`dlopen` it: "undefined symbol: aoti_torch_...". The symbols are read from the `.so`'s dynamic
symbol table and looked up in this torch's own libraries, so the answer is the loader's own. A
`save_cache_artifacts()` blob needs `torch.compiler.load_cache_artifacts`, which torch 2.7 added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._artifacts import host_torch, is_cache, no_artifact, outcome, torch_of
from inductor_doctor.kb._catalog import version_tuple

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts

#: torch.compiler.load_cache_artifacts (pytorch#143341) first shipped in torch 2.7.0.
LOAD_CACHE_ARTIFACTS = (2, 7)


def judge_artifact(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
    if not host.torch_version:
        if host.planned:  # a plan that pins no torch: nothing to compare
            return None
        return outcome(Status.AFFECTED, f"{host.what} has no torch to load {art.name} with")
    if art.device == "cuda" and not host.planned and not host.torch_cuda:
        return outcome(
            Status.AFFECTED,
            f"{art.name} is a CUDA artifact, and {host_torch(host)} is a build "
            "without CUDA: it cannot load its kernels",
        )
    if art.kind == "cache-blob":
        v = version_tuple(host.torch_version, 2)
        if v is not None and v < LOAD_CACHE_ARTIFACTS:
            return outcome(
                Status.AFFECTED,
                f"torch {host.torch_version} has no "
                "torch.compiler.load_cache_artifacts (torch 2.7 added it): it cannot read "
                f"this blob of {torch_of(art)}",
                Basis.VERSION,
            )
        return None
    if is_cache(art):
        return None
    symbols = sorted({s for o in art.objects for s in o.torch_symbols})
    if not symbols:
        return None
    missing = host.missing_torch_symbols(symbols)
    if missing is None:
        if host.planned:
            return None
        return outcome(
            Status.INCONCLUSIVE,
            f"could not read the libraries of {host_torch(host)} to look up "
            f"the {len(symbols)} torch symbols {art.name} needs",
        )
    if missing:
        return outcome(
            Status.AFFECTED,
            f"{art.name} needs {len(missing)} of its {len(symbols)} torch symbols "
            f"that {host_torch(host)} does not export (first: {missing[0]}): loading it fails "
            'with "undefined symbol"; it was built by another torch',
            missing=missing[:20],
        )
    return outcome(Status.OK, f"{host_torch(host)} exports all {len(symbols)} torch symbols {art.name} needs")


def _not_loadable_blob(_inp: object) -> list:
    return no_artifact(_inp)


#: The issue's rule and plan hook (the loader takes them by name): a plain check or plan has no
#: artifact to compare; `check --artifact` asks `judge_artifact` about each artifact (in `load_order`).
rule = no_artifact
predict = _not_loadable_blob
