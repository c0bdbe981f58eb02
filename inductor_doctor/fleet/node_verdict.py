"""`check --format node-verdict`: one node's check as the verdict a fleet engine acts on.

The engines that gate nodes before jobs (Slurm's HealthCheckProgram and prolog, Kubernetes'
node-problem-detector, NVIDIA's Health Validation) take a plug-in by a plain contract: an exit code
(0 healthy, 1 a problem, anything else unknown), one line of reason, and a JSON verdict with a
category, a severity per check and the recommended action. None of them looks at the compile stack;
this document lets them, shaped after Health Validation's `NodeVerdict` (an `overall_severity` of
PASS, INFO, WARNING, CRITICAL or UNKNOWN, the `affected_components`, a verdict per check with its
recommended action) and with the one line of reason a drain needs.

Each check's severity is its finding's: `affected` is CRITICAL (WARNING for an issue of warning
severity), `likely` WARNING (predicted, not shown), `inconclusive` UNKNOWN (could not check), a
suppressed finding INFO, `ok` PASS; not-applicable checks are counted, not listed. Whether the node
fails is the check's own policy (`--fail-on`, `--fail-on-warnings`, suppressions), so the exit code
is exactly `check`'s: 1 when a finding is at or above the threshold.

Whose problem it is (soperator's `[node_problem]` and `[user_problem]` drains): a finding caused by a
compile-stack setting of the environment the check ran in (a variable it names, such as
`CUDA_VISIBLE_DEVICES` or `TORCHINDUCTOR_CACHE_DIR`, that is set) is the job's own to change, `user`;
anything else (a compiler, headers, a driver, a read-only default cache, the install) is the node's.
An adapter that runs in the node's own context (HealthCheckProgram, a DaemonSet) has no user, and
treats every problem as the node's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from inductor_doctor.core.codes import FailOn
from inductor_doctor.core.document import Document, Policy
from inductor_doctor.core.model import ExitCode, Finding, Report, Severity, Status, exit_code_for, summarize

CATEGORY = "compile-stack"
#: Severities from the least to the most worrying: the node's is its checks' worst.
SEVERITIES = ("PASS", "INFO", "WARNING", "UNKNOWN", "CRITICAL")
#: What a fleet engine should do with the node.
ACTIONS = ("NONE", "REVIEW", "NOTIFY_USER", "DRAIN")
#: A drain reason is one line in `sinfo -R` and `scontrol show node`: kept short.
REASON_CHARS = 200
#: Variables of the environment that are the machine's, not a job's setting.
SYSTEM_VARIABLES = frozenset({"PATH", "TMPDIR", "HOME", "VIRTUAL_ENV", "CONDA_PREFIX"})


def severity(finding: Finding) -> str:
    """One check's severity, from its finding alone."""
    if finding.suppressed is not None:
        return "INFO"
    if finding.status is Status.AFFECTED:
        return "WARNING" if finding.severity is Severity.WARNING else "CRITICAL"
    if finding.status is Status.LIKELY:
        return "WARNING"
    if finding.status is Status.INCONCLUSIVE:
        return "UNKNOWN"
    return "PASS"


def problem_of(finding: Finding, settings: Mapping[str, Any]) -> str:
    """`user` when the finding names a compile-stack variable set in the checked environment."""
    for name in settings:
        if name in SYSTEM_VARIABLES:
            continue
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", finding.reason):
            return "user"
    return "node"


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _action(finding: Finding) -> Optional[Dict[str, Any]]:
    """The finding's first workaround, as the check's recommended action."""
    for w in finding.workarounds:
        return {"text": w.text, "command": w.command, "kind": w.kind}
    return None


@dataclass
class NodeVerdict(Document):
    """The `inductor-doctor/node-verdict/v1` document."""

    node: str
    checks: List[Dict[str, Any]]
    summary: Dict[str, int]
    failing: List[Dict[str, Any]]
    tool_version: str
    kb_version: str
    meta: Dict[str, Any] = field(default_factory=dict)
    command: str = "node-verdict"

    @property
    def overall(self) -> str:
        if self.meta.get("interrupted"):
            return "UNKNOWN"
        worst = max((SEVERITIES.index(c["severity"]) for c in self.checks), default=0)
        return SEVERITIES[worst]

    @property
    def problem(self) -> Optional[str]:
        owners = {c["problem"] for c in self.failing}
        return "node" if "node" in owners else "user" if owners else None

    @property
    def recommended_action(self) -> str:
        if self.failing:
            return "DRAIN" if self.problem == "node" else "NOTIFY_USER"
        return "NONE" if self.overall in ("PASS", "INFO") else "REVIEW"

    def reason(self) -> str:
        """The one line a drain or a node condition carries: whose problem, which issue, where, why."""
        if self.meta.get("interrupted"):
            return "inductor-doctor: the check was interrupted before it finished (no verdict)"
        if not self.failing:
            counts = ", ".join(f"{n} {s}" for s, n in self.summary.items() if n and s != "not-applicable")
            return _one_line(f"inductor-doctor: compile stack {self.overall} ({counts or 'nothing checked'})",
                             REASON_CHARS)
        first = self.failing[0]
        more = len({(c["check_id"]) for c in self.failing}) - 1
        tail = f" (+{more} more: inductor-doctor check)" if more > 0 else ""
        head = f"[{self.problem}_problem] inductor-doctor: {first['check_id']} on {first['entity']}: "
        return _one_line(head + first["message"], REASON_CHARS - len(tail)) + tail

    def body(self) -> Dict[str, Any]:
        affected: Dict[str, Dict[str, Any]] = {}
        for c in self.checks:
            if c["severity"] == "PASS":
                continue
            comp = affected.setdefault(CATEGORY, {"category": CATEGORY, "check_ids": [], "entities": [],
                                                  "max_severity": "PASS"})
            if c["check_id"] not in comp["check_ids"]:
                comp["check_ids"].append(c["check_id"])
            if c["entity"] not in comp["entities"]:
                comp["entities"].append(c["entity"])
            if SEVERITIES.index(c["severity"]) > SEVERITIES.index(comp["max_severity"]):
                comp["max_severity"] = c["severity"]
        return {
            "node": self.node,
            "category": CATEGORY,
            "overall_severity": self.overall,
            "healthy": not self.failing and not self.meta.get("interrupted"),
            "problem": self.problem,
            "recommended_action": self.recommended_action,
            "reason": self.reason(),
            "affected_components": list(affected.values()),
            "checks": self.checks,
            "summary": self.summary,
            "meta": self.meta,
        }

    def outcome(self, policy: Policy) -> ExitCode:
        return ExitCode.FINDINGS if self.failing else ExitCode.OK


def node_verdict(report: Report, policy: Policy) -> NodeVerdict:
    """The verdict of one node's `check` report under the check's own policy."""
    fail_on, warnings = policy if policy is not None else (FailOn.AFFECTED, False)
    settings = dict((report.environment or {}).get("env") or {})
    checks: List[Dict[str, Any]] = []
    failing: List[Dict[str, Any]] = []
    for f in sorted(report.findings, key=lambda f: -f.status.rank):
        if f.status is Status.NOT_APPLICABLE:
            continue
        check = {
            "check_id": f.id,
            "entity": f.device,
            "status": f.status.value,
            "severity": severity(f),
            "problem": problem_of(f, settings) if f.status is not Status.OK else None,
            "message": _one_line(f.reason, 400),
            "recommended_action": _action(f) if f.status is not Status.OK else None,
            "basis": f.basis.value,
            "suppressed": f.suppressed,
            "upstream": list(f.upstream),
        }
        check["fails"] = exit_code_for([f], fail_on, warnings) is ExitCode.FINDINGS
        checks.append(check)
        if check["fails"]:
            failing.append(check)
    meta = {key: report.meta[key] for key in ("duration_s", "cached", "static", "interrupted", "exit_code")
            if key in report.meta}
    meta["fail_on"] = fail_on.value
    host = (report.environment or {}).get("host") or {}
    return NodeVerdict(node=str(host.get("hostname") or ""), checks=checks,
                       summary=summarize(report.findings), failing=failing, tool_version=report.tool_version,
                       kb_version=report.kb_version, meta=meta)

