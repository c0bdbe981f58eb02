"""`explain ISSUE`: the page of one known issue, plus what the knowledge base knows in structure.

It reads the issue's docs page and its canary as text; it never imports torch.
"""

from __future__ import annotations

from typing import Any, Dict

from inductor_doctor.model import KnownIssue, UsageError


def find_issue(query: str) -> KnownIssue:
    from inductor_doctor.kb import registry

    reg = registry()
    issue = reg.find(query)
    if issue is None:
        close = reg.closest(query)
        hint = f"; closest: {', '.join(close)}" if close else "; see `inductor-doctor list`"
        raise UsageError(f"unknown issue {query!r}{hint}")
    return issue


def issue_document(issue: KnownIssue) -> Dict[str, Any]:
    from inductor_doctor import __version__
    from inductor_doctor.canaries import script_path
    from inductor_doctor.kb import KB_VERSION, docs_page

    try:
        page = docs_page(issue).read_text(encoding="utf-8")
    except OSError:
        page = None
    canary = None
    if issue.canary is not None:
        try:
            canary = script_path(issue.canary.script).read_text(encoding="utf-8")
        except OSError:
            canary = None
    doc = {
        "schema": "inductor-doctor/explain/v1",
        "tool_version": __version__,
        "kb_version": KB_VERSION,
        "issue": issue.to_dict(),
        "page": page,
        "canary_source": canary,
    }
    return doc


def explain_issue(query: str, fmt: str) -> str:
    issue = find_issue(query)
    doc = issue_document(issue)
    if fmt == "json":
        from inductor_doctor.render.json_out import to_json

        return to_json(doc)
    from inductor_doctor.render.explain_text import explain_text

    return explain_text(issue, doc)
