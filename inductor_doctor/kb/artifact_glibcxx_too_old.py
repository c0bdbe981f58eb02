"""A compiled artifact's `.so` needs a libstdc++ (or glibc) newer than the one that would load it.

A `.so` built by GCC N names the symbol versions it uses (`GLIBCXX_3.4.30` for GCC 12) in its
`.gnu.version_r`; the dynamic loader refuses it where the libstdc++ already in the process defines
no such version: "version `GLIBCXX_3.4.32' not found (required by .../model.so)". The versions
needed are read from the artifact's `.so` files; the ones defined, from the libstdc++ and glibc
that this Python loads (the probe's facts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from inductor_doctor.core.artifact_facts import version_key
from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._artifacts import first_object_needing, no_artifact, outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.artifact.host import HostView
    from inductor_doctor.core.artifact_facts import ArtifactFacts

LIBS = (
    ("glibcxx", "GLIBCXX_", "libstdc++"),
    ("cxxabi", "CXXABI_", "libstdc++"),
    ("glibc", "GLIBC_", "glibc"),
)


def judge_artifact(art: ArtifactFacts, host: HostView) -> Optional[RuleOutcome]:
    said = []
    for attr, prefix, lib in LIBS:
        needs = art.newest(attr)
        if not needs:
            continue
        has = getattr(host, attr)
        if not has:
            if host.planned:
                continue
            return outcome(
                Status.INCONCLUSIVE,
                f"{art.name} needs {prefix}{needs}, and the {lib} this "
                "Python loads, or its versions, is unknown",
            )
        if version_key(needs) > version_key(has):
            who = first_object_needing(art, attr, needs) or art.name
            where = f" ({host.libstdcxx})" if lib == "libstdc++" and host.libstdcxx else ""
            return outcome(
                Status.AFFECTED,
                f"{who} needs {prefix}{needs}, but the {lib} {host.what} loads"
                f'{where} defines up to {prefix}{has}: loading it fails with "version '
                f"`{prefix}{needs}' not found\"",
                needs=f"{prefix}{needs}",
                has=f"{prefix}{has}",
            )
        said.append(f"{prefix}{needs} <= {prefix}{has}")
    if not said:
        return None
    return outcome(Status.OK, f"{host.what}'s libraries are new enough: " + ", ".join(said))


#: The issue's rule and plan hook (the loader takes them by name): a plain check or plan has no
#: artifact to compare; `check --artifact` asks `judge_artifact` about each artifact (in `load_order`).
rule = no_artifact
predict = no_artifact
