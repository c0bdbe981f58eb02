"""`explain ISSUE` and `list`: the knowledge base as documents.

Both read the registry, the issue's docs page and its canary as text; neither imports torch nor
runs the probe. `explain` also says whether this machine is affected when that is known cheaply:
from the last `check` whose verdicts are still valid here (the result cache), never by running one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.core.codes import UsageError
from inductor_doctor.core.document import Document


@dataclass
class IssuePage(Document):
    """One known issue: what the knowledge base holds, its page, its canary, and any verdict here."""

    issue: Dict[str, Any]  # the issue as data (`KnownIssue.to_dict()`, read from its data file)
    kb_version: str
    page: Optional[str] = None
    canary_source: Optional[str] = None
    here: List[Dict[str, Any]] = field(default_factory=list)  # this machine's last known findings
    installed: Dict[str, str] = field(default_factory=dict)  # package -> version, from that check
    record: Dict[str, Any] = field(default_factory=dict)  # which check that was: when, and its settings
    command: str = "explain"

    def body(self) -> Dict[str, Any]:
        return {
            "issue": dict(self.issue),
            "page": self.page,
            "canary_source": self.canary_source,
            "here": list(self.here),
            "installed": dict(self.installed),
            **({"record": dict(self.record)} if self.record else {}),
        }


@dataclass
class IssueList(Document):
    """Every known issue, and the plugins that failed to load."""

    issues: Sequence[Dict[str, Any]]
    kb_version: str
    plugin_errors: Sequence[Tuple[str, str]] = ()
    command: str = "list"

    def body(self) -> Dict[str, Any]:
        return {
            "issues": [dict(i) for i in self.issues],
            "plugin_errors": [{"entry_point": n, "error": e} for n, e in self.plugin_errors],
        }


def find_issue(query: str) -> Dict[str, Any]:
    """An issue by id, alias or upstream ref; unknown is a usage error naming only real near matches."""
    from inductor_doctor.kb import entries, find_entry, normalize_ref

    issue = find_entry(query)
    if issue is None:
        known = entries()
        ref = normalize_ref(query)
        if ref is not None:
            raise UsageError(f"no known issue cites {ref}; `inductor-doctor list` shows them all, and "
                             "`inductor-doctor explain --log FILE` matches an error text")
        close = known.closest(query)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see `inductor-doctor list`"
        raise UsageError(f"unknown issue {query!r}{hint}")
    return issue


def issue_page(query: str, python: Optional[str] = None) -> IssuePage:
    from inductor_doctor.kb import KB_VERSION, docs_dir
    from inductor_doctor.target import canary_path

    issue = find_issue(query)
    page_path = Path(issue["docs_page"]) if issue.get("docs_page") else docs_dir() / f"{issue['id']}.md"
    try:
        page: Optional[str] = page_path.read_text(encoding="utf-8")
    except OSError:
        page = None
    canary = None
    if issue.get("canary"):
        try:
            canary = canary_path(issue["canary"]).read_text(encoding="utf-8")
        except OSError:
            canary = None
    here, installed, record = _known_here(issue["id"], python)
    return IssuePage(issue, KB_VERSION, page, canary, here, installed, record)


def _known_here(issue_id: str, python: Optional[str]) -> Tuple[List[Dict[str, Any]], Dict[str, str],
                                                                Dict[str, Any]]:
    """This issue's findings from the last check of this interpreter, if that is still on record,
    the package versions that check saw (which workarounds are for the releases here), and which
    check it was: when, and the settings of it that differ from this process's."""
    try:
        from inductor_doctor.check.cache import checked_when, last_report, settings_differ

        report = last_report(python)
        if report is None:
            return [], {}, {}
        packages = (report.get("environment") or {}).get("packages") or {}
        installed = {str(k): str(v) for k, v in packages.items() if v}
        here = [f for f in report["results"] if f.get("id") == issue_id]
        record = {"checked_at": checked_when(report), "settings_differ": settings_differ(report)}
        return here, installed, record
    except Exception:  # a missing or unreadable record only means "not known cheaply"
        return [], {}, {}


def issue_list() -> IssueList:
    from inductor_doctor.kb import KB_VERSION, entries

    known = entries()
    return IssueList(list(known.entries), KB_VERSION, list(known.plugin_errors))
