"""What the five artifact issues share: the rule of a plain `check` (they concern `--artifact`
only), the order in which they are asked, and how an artifact's build facts are said."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts

NO_ARTIFACT = "concerns compiled artifacts only: `check --artifact PATH` or `plan --artifact PATH`"


def no_artifact(_facts: object) -> List[RuleOutcome]:
    """A plain check or plan has no artifact to compare: the row cannot arise."""
    return [RuleOutcome(Status.NOT_APPLICABLE, NO_ARTIFACT, Basis.STATIC)]


def artifact_only(issue: object) -> bool:
    """An issue decided only against an artifact (`check --artifact`, `plan --artifact`), whose
    rows are the artifacts' own: a check or plan of the host makes no row for it, on no device,
    rather than five not-applicable rows that say to pass `--artifact`."""
    return getattr(issue, "rule", None) is no_artifact


def outcome(status: Status, reason: str, basis: Basis = Basis.STATIC, **details: object) -> RuleOutcome:
    return RuleOutcome(status, reason, basis, None, dict(details))


def is_cache(art: ArtifactFacts) -> bool:
    return art.kind in ("cache-blob", "cache-dir")


def torch_of(art: ArtifactFacts) -> str:
    if not art.torch_version:
        return "an unrecorded torch"
    git = f" (git {art.torch_git[:10]})" if art.torch_git else ""
    return f"torch {art.torch_version}{git}"


def host_torch(host: HostView) -> str:
    if not host.torch_version:
        return f"{host.what} has no torch"
    return f"torch {host.torch_version}"


def built_for(art: ArtifactFacts) -> List[str]:
    """The evidence lines: what the artifact says it was built for."""
    parts = [f"{art.kind} {art.name}", f"for {art.device or 'an unrecorded device'}"]
    if art.torch_version:
        parts.append(torch_of(art))
    if art.cpu_isa:
        parts.append(f"CPU ISA {art.cpu_isa}")
    march = next((o.march for o in art.objects if o.march), None)
    if march:
        parts.append(f"-march={march}")
    archs = art.cuda_archs() + art.ptx_archs()
    if archs:
        parts.append("GPU code " + " ".join(archs))
    elif art.compute_capability:
        parts.append(f"compiled on compute capability {art.compute_capability}")
    for attr, label in (("glibcxx", "GLIBCXX_"), ("cxxabi", "CXXABI_"), ("glibc", "GLIBC_")):
        v = art.newest(attr)
        if v:
            parts.append(f"needs {label}{v}")
    symbols = sorted({s for o in art.objects for s in o.torch_symbols})
    if symbols:
        parts.append(f"{len(symbols)} torch symbols")
    if art.entries:
        parts.append(", ".join(f"{n} {k}" for k, n in sorted(art.entries.items())))
    return ["built: " + " · ".join(parts)]


def first_object_needing(art: ArtifactFacts, attr: str, value: str) -> Optional[str]:
    for o in art.objects:
        if getattr(o, attr) == value:
            return o.name.rsplit("/", 1)[-1]
    return None
