"""`inductor-doctor fix`: the last check's workarounds, each tried here before it is offered.

A workaround is offered as a command only when it was verified on this machine: its environment
change applied (and nothing else), the issue's check ran again (the static rule and the canary, on
every device it concerns) and came out clean. What cannot be tried without changing the system (an
install, an upgrade, a code change) is printed as advice, marked unverified. A workaround whose
releases the installed versions are past (an upgrade to what is there) is not offered at all.
`fix` never changes the system: it prints; `eval "$(inductor-doctor fix --shell)"` is the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.codes import UsageError
from inductor_doctor.core.document import Document
from inductor_doctor.core.model import Progress
from inductor_doctor.fix.shell import env_effect
from inductor_doctor.kb import KB_VERSION

FLAGGED = ("affected", "likely")


@dataclass
class FixItem:
    issue: str
    title: str
    devices: List[str]  # where the last check flagged it, with the status: "cpu (affected)"
    text: str
    command: Optional[str]
    kind: str
    verified: bool
    how: str  # what was tried and what came of it, or why it was not tried
    env: Dict[str, Optional[str]] = field(default_factory=dict)  # the change, as bash made it

    def to_dict(self) -> Dict[str, Any]:
        return {"issue": self.issue, "title": self.title, "devices": self.devices, "text": self.text,
                "command": self.command, "kind": self.kind, "verified": self.verified, "how": self.how,
                "env": dict(self.env)}


@dataclass
class FixDocument(Document):
    python: str
    items: List[FixItem]
    checked_at: Optional[str]
    skipped: List[str] = field(default_factory=list)  # workarounds the installed versions make moot
    settings_differ: List[str] = field(default_factory=list)  # the check's settings, where not this process's
    command: str = "fix"
    kb_version: str = KB_VERSION

    def body(self) -> Dict[str, Any]:
        return {
            "python": self.python,
            "checked_at": self.checked_at,
            "results": [i.to_dict() for i in self.items],
            "skipped": list(self.skipped),
            "settings_differ": list(self.settings_differ),
            "summary": {"verified": sum(i.verified for i in self.items),
                        "advice": sum(not i.verified for i in self.items)},
        }


def build_fix(python: Optional[str] = None, verify: bool = True,
              progress: Optional[Progress] = None) -> FixDocument:
    from inductor_doctor.check.cache import last_report, settings_differ
    from inductor_doctor.probe.target import resolve_python

    interpreter = resolve_python(python)
    report = last_report(interpreter)
    if report is None:
        raise UsageError(f"no check on record for {interpreter}: run `inductor-doctor check` first")
    flagged: Dict[str, List[Mapping[str, Any]]] = {}
    for f in report["results"]:
        if f["status"] in FLAGGED and not f.get("suppressed"):
            flagged.setdefault(f["id"], []).append(f)
    installed = _installed(report.get("environment") or {})
    doc = FixDocument(interpreter, [], (report.get("meta") or {}).get("finished_at"),
                      settings_differ=settings_differ(report))
    progress = progress or Progress()
    for issue_id, findings in flagged.items():
        progress.phase(f"trying the workarounds of {issue_id}")
        doc.items += _issue_items(issue_id, findings, installed, python, verify, doc.skipped)
    return doc


def _installed(environment: Mapping[str, Any]) -> Dict[str, List[str]]:
    from packaging.utils import canonicalize_name

    packages = environment.get("packages") or {}
    return {canonicalize_name(k): [str(v)] for k, v in packages.items() if v}


def _as_found(findings: List[Mapping[str, Any]]) -> Tuple[Any, ...]:
    """The workarounds as the check ordered them by its evidence (KnownIssue.advise), from the
    first finding that has any."""
    from inductor_doctor.core.model import Workaround

    for f in findings:
        if f.get("workarounds"):
            return tuple(Workaround(w["text"], w.get("command"), w.get("kind", "other"),
                                    dict(w.get("applies") or {})) for w in f["workarounds"])
    return ()


def _issue_items(issue_id: str, findings: List[Mapping[str, Any]], installed: Dict[str, List[str]],
                 python: Optional[str], verify: bool, skipped: List[str]) -> List[FixItem]:
    from inductor_doctor.kb import registry
    from inductor_doctor.triage.versions import already_met

    issue = registry().find(issue_id)
    if issue is None:
        return []
    where = [f"{f['device']} ({f['status']})" for f in findings]
    items: List[FixItem] = []
    verified_one = False
    for w in _as_found(findings) or issue.workarounds:
        moot = already_met(w, installed)
        if moot is not None:
            why = moot.replace("the log", "this install", 1)
            skipped.append(f"{issue_id}: {w.command or w.text} ({why})")
            continue
        item = FixItem(issue_id, issue.title, where, w.text, w.command, w.kind, False, "")
        effect = env_effect(w.command) if w.command and w.kind == "env" else None
        if effect is None:
            item.how = _why_advice(w.kind, w.command)
        elif verified_one:
            item.how = "not tried: an earlier workaround already clears it"
            item.env = effect
        elif not verify:
            item.how = "not tried (--no-verify)"
            item.env = effect
        else:
            item.env = effect
            item.verified, item.how = _try(issue_id, effect, python)
            verified_one = verified_one or item.verified
        items.append(item)
    return items


def _why_advice(kind: str, command: Optional[str]) -> str:
    if command is None:
        return "advice: a change to make by hand"
    if kind in ("install", "upgrade", "pin"):
        return "advice, not tried: it installs software (fix never changes the system)"
    if kind == "code":
        return "advice: a change to the code"
    return "advice, not tried: it is more than an environment change"


def _try(issue_id: str, effect: Dict[str, Optional[str]], python: Optional[str]) -> tuple:
    """The issue's check again under `effect` (the request's environment; this process's is never
    changed): verified when nothing is flagged any more."""
    from inductor_doctor.check.flow import CheckRequest, run_check

    report = run_check(CheckRequest(python=python, only=[issue_id], remember=False, env=effect))
    mine = [f for f in report.findings if f.id == issue_id]
    still = [f for f in mine if f.status.value not in ("ok", "not-applicable")]
    if mine and not still:
        how = ", ".join(sorted({f"{f.device} {f.basis.value}: {f.status.value}" for f in mine}))
        return True, f"verified here: with it, the check came out clean ({how})"
    if not mine:
        return False, "tried here: the check had nothing to say with it"
    first = still[0]
    return False, f"tried here: {first.device} is still {first.status.value} with it ({first.reason})"
