"""`explain ISSUE` at a terminal: the answer first, the details on request.

The first screen says what the issue is, whether this machine is affected (when the last check of
it is still on record), and what to run; `--full` adds the whole page, the canary to copy and every
reference. Both are rendered from the same document as `--format json`. The first screen is laid out
without rich (`plain.Writer`): `explain` is one of the commands that must answer at once.
"""

from __future__ import annotations

from typing import Any, List, Mapping

from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import COMMAND, DIM, STATUS, STRONG, WARN, terminal_width, use_color


def render(data: Mapping[str, Any], full: bool = False, **_: Any) -> str:
    issue = data["issue"]
    color = use_color()
    out = Writer(terminal_width(), color)
    out.para(f"{issue['id']}: {issue['title']}", STRONG)
    facts = [issue["severity"], "/".join(issue["devices"])]
    if issue.get("aliases"):
        facts.append("also: " + ", ".join(issue["aliases"]))
    out.para(" · ".join(facts), DIM)
    out.line()
    out.para(issue["summary"])
    out.line()
    _here(out, data)
    _workarounds(out, issue, data.get("installed") or {}, full)
    if issue.get("upstream"):
        out.para("Upstream: " + ", ".join(issue["upstream"]), DIM)
    if not full:
        out.para(f"More: inductor-doctor explain {issue['id']} --full (the whole page, the reproducer)", DIM)
        return out.text()
    return out.text() + _full(data, color)


def _here(out: Writer, data: Mapping[str, Any]) -> None:
    here = data.get("here") or []
    record = data.get("record") or {}
    when = f"last check, {record['checked_at']}" if record.get("checked_at") else "last check"
    if here:
        for f in here:
            out.spans(("Here: ", STRONG), (f["status"], STATUS.get(f["status"], "")),
                      (f" on {f['device']} ({when}):", ""))
            out.para(f["reason"], indent=6)
        if record.get("settings_differ"):
            differ = "; ".join(record["settings_differ"])
            again = f"`inductor-doctor check --only {data['issue']['id']}`"
            out.para(f"that check ran under other settings ({differ}): {again} for the verdict under these",
                     WARN, indent=6)
    else:
        out.para(f"Here: not checked yet — inductor-doctor check --only {data['issue']['id']}", DIM)
    out.line()


def _workarounds(out: Writer, issue: Mapping[str, Any], installed: Mapping[str, str], full: bool) -> None:
    """Every workaround, or (when the last check of this machine saw the installed releases, and
    without --full) those for the releases here: one made for another release is noise at best."""
    ways: List[Mapping[str, Any]] = list(issue.get("workarounds") or [])
    if not ways:
        return
    hidden = 0
    if installed and not full:
        shown = [w for w in ways if _applies(w.get("applies") or {}, installed)]
        hidden, ways = len(ways) - len(shown), shown
    out.para("What to do:", STRONG)
    for w in ways:
        only = ", ".join(f"{k}{v}" for k, v in (w.get("applies") or {}).items())
        out.hanging("-", w["text"] + (f" (only {only})" if only else ""), 2)
        if w.get("command"):
            out.hanging("$", w["command"], 4, COMMAND)
    if hidden:
        out.para(f"({hidden} more, for releases not installed here: --full shows them)", DIM, indent=2)
    out.line()


def _applies(applies: Mapping[str, str], installed: Mapping[str, str]) -> bool:
    """`Workaround.applies_to`, without loading the model (explain answers at once): a package
    whose version is unknown here never hides a workaround."""
    if not applies:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    def canon(name: str) -> str:
        return name.lower().replace("_", "-").replace(".", "-")

    versions = {canon(k): v for k, v in installed.items()}
    for name, spec in applies.items():
        have = versions.get(canon(name))
        if not have:
            continue
        try:
            if not SpecifierSet(spec).contains(Version(Version(have).public), prereleases=True):
                return False
        except (InvalidSpecifier, InvalidVersion):
            continue
    return True


def _full(data: Mapping[str, Any], color: bool) -> str:
    """The page and the reproducer: rich's Markdown and syntax colour on a terminal, as is elsewhere."""
    issue = data["issue"]
    page, source = data.get("page"), data.get("canary_source")
    parts = ["", "─" * min(terminal_width(), 100), ""]
    if page:
        parts.append(_markdown(page) if color else page.rstrip("\n"))
    if source and issue.get("canary"):
        script = issue["canary"]
        device = (issue.get("devices") or ["cpu"])[0]
        out = Writer(terminal_width(), color)
        out.line()
        out.para(f"Reproducer ({script}; run: python {script} {device}):", STRONG)
        parts.append(out.text().rstrip("\n"))
        parts.append(source.rstrip("\n"))
    out = Writer(terminal_width(), color)
    out.line()
    out.para(f"check it here: inductor-doctor check --only {issue['id']}", DIM)
    parts.append(out.text().rstrip("\n"))
    return "\n".join(parts) + "\n"


def _markdown(page: str) -> str:
    from rich.markdown import Markdown

    from inductor_doctor.render.style import console_to_string

    return console_to_string(lambda console: console.print(Markdown(page))).rstrip("\n")
