"""`plan`: which known issues a planned stack would hit, decided before anything is installed.

A `docker build` should fail at its first line, not after a 3 GB torch download, when the pins in
`requirements.txt` are known to break `torch.compile`. So `plan` reads specs and requirements
files, resolves each range over the real releases in `core/releases.py`, and asks each known issue:
do *all* versions the range allows hit you (`affected`), *some* (`likely`), or *none* (`ok`)? A
component the plan does not contain is `not-applicable`. By default an issue is judged on its
`affected` specifiers; an issue that also depends on the compiler, flags, GPU, driver or Python
sets a `predict` hook that reads a `PlanInput`.

This module imports nothing heavy and runs nothing (no torch, no compiler, no network), but for one
case: with `--gpu`, when the Triton installed here is the one the plan pins, the rows a compile decides
are earned by compiling the canary kernels for that GPU with it (`check/cross.py`, about two seconds);
otherwise they stay predictions, and the plan says so.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from inductor_doctor.core.document import Policy
from inductor_doctor.core.model import (
    ExitCode,
    Finding,
    Report,
    Severity,
    Status,
    UsageError,
)
from inductor_doctor.core.plan_input import PlanInput, PlannedPackage
from inductor_doctor.core.releases import RELEASES_AS_OF
from inductor_doctor.plan.compiled import compiled_here
from inductor_doctor.plan.predict import cpu_only_rules_out, predict_issue  # noqa: F401 - re-exported
from inductor_doctor.plan.resolve import PlanRequest, build_input

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.kb import Registry


class PlanReport(Report):
    """`plan`'s report: a predicted issue of error severity fails it (exit 1), with no `--fail-on`."""

    def outcome(self, policy: Policy) -> ExitCode:
        return ExitCode.FINDINGS if self.meta.get("predicted") else ExitCode.OK


def _planned_version(p: Optional[PlannedPackage]) -> Optional[Dict[str, Any]]:
    if p is None:
        return None
    if p.resolved == "pin":
        version = p.candidates[0]
    else:
        shown = p.describe()
        version = shown[len(p.shown_name):].strip() if shown.startswith(p.shown_name) else shown
    return {"version": version or "any", "planned": True}


def _planned_torch(inp: PlanInput) -> Optional[Dict[str, Any]]:
    """The planned torch, with the build `plan` decided (CPU-only, CUDA 12.8) and what said so."""
    torch = _planned_version(inp.package("torch"))
    if torch is not None:
        torch.update(build=inp.build, build_source=inp.build_source or None,
                     cuda=inp.cuda if inp.build == "cuda" else None)
    return torch


def _environment(inp: PlanInput, files: Sequence[str], specs: Sequence[str]) -> Dict[str, Any]:
    """The planned stack, in the probe's shape where it overlaps (so renderers show it), plus
    `plan`: every package with the versions judged and where its requirement came from."""
    gpus = []
    if inp.gpu_sm is not None:
        sm = f"{inp.gpu_sm // 10}.{inp.gpu_sm % 10}"
        gpus.append({"index": 0, "name": f"sm_{inp.gpu_sm}", "sm": sm})
    return {
        "python": {
            "version": inp.python_version + ("t" if inp.free_threaded else ""),
            "platform": inp.platform,
            "free_threaded": inp.free_threaded,
        },
        "torch": _planned_torch(inp),
        "triton": _planned_version(inp.package("triton")),
        "xla": _planned_version(inp.package("torch-xla")),
        "cuda": {"runtime_version": inp.cuda, "driver_version": inp.driver, "gpus": gpus},
        "cxx": (
            {
                "command": inp.cxx.command,
                "kind": inp.cxx.kind,
                "version": inp.cxx.version,
                "flags": list(inp.cxxflags),
            }
            if inp.cxx
            else {"command": None, "flags": list(inp.cxxflags)}
        ),
        "plan": {
            "specs": list(specs),
            "requirement_files": list(files),
            "packages": {
                name: {
                    "specifier": p.specifier,
                    "versions": list(p.candidates),
                    "resolved": p.resolved,
                    "sources": list(p.sources),
                    "inferred_from": p.inferred_from,
                }
                for name, p in sorted(inp.packages.items())
            },
            "releases_as_of": RELEASES_AS_OF,
        },
    }


def unknown_releases(inp: PlanInput) -> List[str]:
    """A pinned release the knowledge base does not know is said to be unknown, never judged
    silently as if it were a known one."""
    from packaging.version import InvalidVersion, Version

    from inductor_doctor.core.releases import RELEASES

    out = []
    for name, pkg in sorted(inp.packages.items()):
        known = RELEASES.get(name)
        if not known or pkg.resolved != "pin" or not pkg.candidates:
            continue
        try:
            pinned = Version(Version(pkg.candidates[0]).public)
            newest = max(Version(v) for v in known)
        except InvalidVersion:
            continue
        if pinned.is_prerelease or pinned.is_devrelease or str(pinned) in known:
            continue
        shown = f"{pkg.shown_name} {pkg.candidates[0]}"
        if pinned > newest:
            out.append(f"{shown} is newer than any release the knowledge base knows (it knows "
                       f"{pkg.shown_name} up to {newest}, as of {RELEASES_AS_OF}): its predictions "
                       "extrapolate from those")
        else:
            out.append(f"{shown} is not a {pkg.shown_name} release the knowledge base knows (as of "
                       f"{RELEASES_AS_OF}): check the version")
    return out


def planned_host(inp: PlanInput) -> Any:
    """The planned stack as an artifact sees it: torch where one release is pinned, the GPU of
    `--gpu`; the CPU, libstdc++ and glibc of an image not yet built are unknown."""
    from inductor_doctor.artifact.host import HostView

    def pinned(name: str) -> Optional[str]:
        p = inp.package(name)
        return p.candidates[0] if p is not None and p.resolved == "pin" and p.candidates else None

    gpus = {"cuda:0": f"{inp.gpu_sm // 10}.{inp.gpu_sm % 10}"} if inp.gpu_sm is not None else {}
    return HostView(torch_version=pinned("torch"), triton_version=pinned("triton"), platform=inp.platform,
                    gpus=gpus, planned=True, what="the planned stack")


def run_plan(request: PlanRequest, registry: Optional[Registry] = None) -> PlanReport:
    """Predict every known issue for the planned stack; `meta["predicted"]` drives exit code 1.

    Warning-severity predictions are reported but, as in `check`, do not fail the plan.
    """
    from inductor_doctor.core.version import __version__
    from inductor_doctor.kb import KB_VERSION
    from inductor_doctor.kb import registry as default_registry

    if not request.specs and not request.requirement_files and not request.artifacts:
        raise UsageError(
            "plan needs SPECs or -r FILE — e.g. `inductor-doctor plan torch==2.5.1 triton==3.1.0`"
        )
    if request.artifacts:  # a missing or unreadable artifact is the user's error, said first
        from inductor_doctor.check.artifacts import read

        read(request.artifacts)
    inp, files, ignored = build_input(request)
    reg = registry if registry is not None else default_registry()
    findings: List[Finding] = []
    for issue in reg:
        if issue.judge_artifact is None:  # an artifact issue's rows are `--artifact`'s, one per artifact
            findings.extend(predict_issue(inp, issue))
    if request.artifacts:
        from inductor_doctor.check.artifacts import plan_artifacts

        findings.extend(plan_artifacts(request.artifacts, planned_host(inp)))
    findings, compiled = compiled_here(inp, findings, list(reg))  # plan --gpu with the planned Triton
    findings.sort(key=lambda f: (-f.status.rank, f.id, f.device))
    predicted = [
        f.id
        for f in findings
        if f.status in (Status.AFFECTED, Status.LIKELY) and f.severity is Severity.ERROR
    ]
    meta: Dict[str, Any] = {
        "predicted": bool(predicted),
        "predicted_ids": sorted(set(predicted)),
        "ignored": list(ignored),
        "releases_as_of": RELEASES_AS_OF,
    }
    unknown = unknown_releases(inp)
    if compiled:
        meta["gpu_compile"] = compiled
    if unknown:
        meta["notices"] = unknown
    return PlanReport(
        command="plan",
        environment=_environment(inp, files, request.specs),
        findings=findings,
        tool_version=__version__,
        kb_version=KB_VERSION,
        meta=meta,
    )
