"""`explain ISSUE` at a terminal: the answer first, the details on request.

The first screen says what the issue is, whether this machine is affected (when the last check of
it is still on record), and what to run; `--full` adds the whole page, the canary to copy and every
reference. Both are rendered from the same document as `--format json`.
"""

from __future__ import annotations

from typing import Any, List, Mapping

from inductor_doctor.render.style import COMMAND, DIM, STATUS, STRONG, console_to_string, hanging, use_color

SUMMARY_WIDTH = 100


def render(data: Mapping[str, Any], full: bool = False, **_: Any) -> str:
    issue = data["issue"]

    def draw(console: Any) -> None:
        from rich.padding import Padding
        from rich.text import Text

        def para(text: str, style: str = "", indent: int = 0) -> None:
            console.print(Padding(Text(text, style=style), (0, 0, 0, indent)))

        console.print(Text(f"{issue['id']}: {issue['title']}", style=STRONG))
        facts = [issue["severity"], "/".join(issue["devices"])]
        if issue.get("aliases"):
            facts.append("also: " + ", ".join(issue["aliases"]))
        para(" · ".join(facts), DIM)
        console.print()
        para(issue["summary"])
        console.print()
        _here(console, data, para)
        _workarounds(console, issue, para)
        if issue.get("upstream"):
            para("Upstream: " + ", ".join(issue["upstream"]), DIM)
        if not full:
            para(f"More: inductor-doctor explain {issue['id']} --full (the whole page, the reproducer)", DIM)
            return
        _full(console, data, para)

    return console_to_string(draw)


def _here(console: Any, data: Mapping[str, Any], para: Any) -> None:
    from rich.text import Text

    issue = data["issue"]
    here = data.get("here") or []
    if here:
        for f in here:
            line = Text("Here: ", style=STRONG)
            line.append(f"{f['status']}", style=STATUS.get(f["status"], ""))
            line.append(f" on {f['device']} (last check): {f['reason']}")
            console.print(line)
    else:
        para(f"Here: not checked yet — inductor-doctor check --only {issue['id']}", DIM)
    console.print()


def _workarounds(console: Any, issue: Mapping[str, Any], para: Any) -> None:
    ways: List[Mapping[str, Any]] = list(issue.get("workarounds") or [])
    if not ways:
        return
    para("What to do:", STRONG)
    for w in ways:
        only = ", ".join(f"{k}{v}" for k, v in (w.get("applies") or {}).items())
        hanging(console, "-", w["text"] + (f" (only {only})" if only else ""), 2)
        if w.get("command"):
            hanging(console, "$", w["command"], 4, COMMAND)
    console.print()


def _full(console: Any, data: Mapping[str, Any], para: Any) -> None:
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.syntax import Syntax
    from rich.text import Text

    issue = data["issue"]
    console.print()
    console.print(Rule(style=DIM))
    page = data.get("page")
    if page:
        console.print(Markdown(page) if use_color() else Text(page))
    source = data.get("canary_source")
    if source and issue.get("canary"):
        script = issue["canary"]
        device = (issue.get("devices") or ["cpu"])[0]
        console.print()
        para(f"Reproducer ({script}; run: python {script} {device}):", STRONG)
        console.print(Syntax(source, "python", theme="ansi_dark") if use_color() else Text(source))
    console.print()
    para(f"check it here: inductor-doctor check --only {issue['id']}", DIM)
