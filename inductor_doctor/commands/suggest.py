"""`plan --suggest`: what to install here, as pip and uv lines, and why nothing newer.

The machine is this one (the probe's GPUs, driver, Python, glibc and C++ compiler, read without
importing torch) unless `--gpu`, `--driver`, `--python-version` or `--cxx` describe another; the
answer comes from the release snapshot alone (`plan/suggest.py`). `--verify` installs the answer
into a scratch venv the doctor owns (`scratch/venv.py`), runs `check` there, and removes it unless
`--keep`: the only part that installs anything.
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.core.document import Document, Policy
from inductor_doctor.core.model import ExitCode, UsageError
from inductor_doctor.plan.requirements import check_python_version
from inductor_doctor.plan.resolve import parse_compiler, parse_driver, parse_gpu
from inductor_doctor.plan.suggest import Judged, Machine, Solution, machine_from_facts, solve


@dataclass
class SuggestRequest:
    gpus: Sequence[str] = ()
    driver: Optional[str] = None
    python_version: Optional[str] = None
    cxx: Optional[str] = None
    requirement_files: Sequence[str] = ()
    xla: bool = False
    verify: bool = False
    keep: bool = False


@dataclass
class Suggestion(Document):
    """The `plan --suggest` document."""

    solution: Solution
    tool_version: str
    kb_version: str
    releases_as_of: str
    verify: Optional[Dict[str, Any]] = None
    notes: List[str] = field(default_factory=list)
    command: str = "suggest"

    @property
    def ok(self) -> bool:
        s = self.solution
        clean = s.chosen is not None and not s.unavoidable
        return clean and (self.verify is None or bool(self.verify.get("ok")))

    def outcome(self, policy: Policy) -> ExitCode:
        return ExitCode.OK if self.ok else ExitCode.FINDINGS

    def body(self) -> Dict[str, Any]:
        s = self.solution
        m = s.machine
        chosen: Optional[Judged] = s.chosen
        return {
            "releases_as_of": self.releases_as_of,
            "machine": {
                "source": m.source,
                "gpus": [{"sm": f"sm_{g}", "name": m.gpu_names[i] if i < len(m.gpu_names) else None}
                         for i, g in enumerate(m.gpus)],
                "driver": m.driver, "python": m.python_version, "glibc": m.glibc, "cxx": m.cxx,
                "platform": f"{m.sys_platform} {m.machine}",
            },
            "suggestion": dict(chosen.candidate.to_dict(), clean=not s.unavoidable) if chosen else None,
            "issues_no_release_avoids": [{"id": k, "reason": v} for k, v in s.unavoidable.items()],
            "per_gpu": [{"gpu": k, "best": v} for k, v in s.per_gpu.items()],
            "passed_over": [{"torch": j.candidate.torch, "variant": j.candidate.variant,
                             "reason": _telling(j, s), "issues": list(j.issues)} for j in s.passed_over
                            if chosen is None or j is not chosen],
            "considered": s.considered,
            "notes": list(s.notes) + list(self.notes),
            "verify": self.verify,
            "ok": self.ok,
        }


def _telling(j: Judged, s: Solution) -> str:
    """The reason that sets this build apart: not one that no release avoids."""
    return next((r for r in j.reasons if r.split(":")[0].split(" on ")[0] not in s.unavoidable), j.reasons[0])


def _this_machine(python_version: Optional[str]) -> Machine:
    """The probe's facts (static: no torch imported anywhere)."""
    from inductor_doctor.probe import gather

    machine = machine_from_facts(gather(live=False))
    if python_version:
        machine = replace(machine, python_version=check_python_version(python_version))
    return machine


def machine_of(request: SuggestRequest) -> Machine:
    """The options given describe the machine; with none, this machine is probed."""
    given = bool(request.gpus or request.driver or request.cxx)
    if not given:
        return _this_machine(request.python_version)
    sms = []
    for g in request.gpus:
        sm = parse_gpu(g)
        assert sm is not None
        sms.append(sm)
    cxx = parse_compiler(request.cxx)
    return Machine(gpus=tuple(sms), gpu_names=tuple(f"sm_{s}" for s in sms),
                   driver=parse_driver(request.driver),
                   python_version=check_python_version(request.python_version),
                   glibc=None, cxx=cxx.command if cxx else None, sys_platform=sys.platform,
                   machine=platform.machine().lower(), source="the options given")


def run_suggest(request: SuggestRequest) -> Suggestion:
    from inductor_doctor.core.releases import RELEASES_AS_OF
    from inductor_doctor.core.version import __version__
    from inductor_doctor.kb import KB_VERSION

    if request.keep and not request.verify:
        raise UsageError("--keep keeps the scratch venv of --verify: add --verify")
    machine = machine_of(request)
    solution = solve(machine, [str(f) for f in request.requirement_files], want_xla=request.xla)
    doc = Suggestion(solution, __version__, KB_VERSION, RELEASES_AS_OF)
    if machine.gpus and not machine.driver:
        doc.notes.append("no driver known: the CUDA release each build needs was not judged (pass --driver)")
    if request.verify:
        described = [f"sm_{g}" for g in machine.gpus] if machine.source == "the options given" else []
        doc.verify = verify(solution, keep=request.keep, gpus=described, driver=machine.driver)
    return doc


def verify(solution: Solution, keep: bool = False, gpus: Sequence[str] = (),
           driver: Optional[str] = None) -> Dict[str, Any]:
    """Install the suggestion into a scratch venv, run `check` there, and say what it found. The GPUs
    the suggestion was asked about that are not here (`--gpu`) are checked as `check --gpu` does: the
    venv's Triton and its assembler compile the canary kernels for each, so the suggestion is shown to
    compile there, not only read from a table (loading and launching stay unproven)."""
    from inductor_doctor.scratch.venv import ScratchError, ScratchVenv

    if solution.chosen is None:
        return {"ok": False, "reason": "nothing to verify: no suggestion", "venv": None}
    c = solution.chosen.candidate
    try:
        venv = ScratchVenv.create(keep=keep)
    except ScratchError as exc:
        return {"ok": False, "reason": str(exc), "venv": None}
    try:
        started = time.monotonic()
        done = venv.install(c.requirements(), index_url=c.index_url)
        out: Dict[str, Any] = {"venv": str(venv.root) if keep else None, "install": " ".join(
            venv.pip_argv(c.requirements(), c.index_url)[1:]), "installed": done.ok,
            "install_s": round(time.monotonic() - started, 1)}
        if not done.ok:
            out.update(ok=False, reason=f"pip install failed: {done.why()}")
            return out
        args = [a for g in gpus for a in ("--gpu", g)] + (["--driver", driver] if gpus and driver else [])
        run = venv.check(args)
        if run.document is None:
            out.update(ok=False, reason=f"check did not report: {run.error}")
            return out
        bad = [r for r in run.document.get("results", [])
               if r.get("status") in ("affected", "likely") and r.get("severity", "error") == "error"]
        installed = (run.document.get("environment", {}).get("torch") or {}).get("version")
        compiled = [f"{r['id']} on {r['device']}: {r['status']}: {r['reason']}"
                    for r in run.document.get("results", []) if r.get("device") in gpus
                    and r.get("proved") == "compiled" and r.get("status") != "not-applicable"]
        if gpus:
            out["gpus"] = {"checked": list(gpus), "compiled": compiled}
        out.update(ok=not bad, torch=installed, summary=run.document.get("summary"),
                   findings=[f"{r['id']} on {r['device']}: {r['status']}: {r['reason']}" for r in bad],
                   reason=(f"check in the scratch venv: torch {installed}, nothing affected" if not bad
                           else f"check in the scratch venv found {len(bad)} issue(s)"),
                   duration_s=round(run.duration_s, 1))
        return out
    finally:
        venv.remove()
