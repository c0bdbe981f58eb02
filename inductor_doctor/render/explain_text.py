"""The rich rendering of one issue's page: the prose page, then the runnable parts set apart."""

from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

from inductor_doctor.model import KnownIssue
from inductor_doctor.render.text import console_to_string, use_color


def explain_text(issue: KnownIssue, doc: Mapping[str, Any]) -> str:
    def render(console: Console) -> None:
        console.print(Text(f"{issue.id}: {issue.title}", style="bold"))
        meta = [f"severity {issue.severity.value}", "devices " + ", ".join(d.value for d in issue.devices)]
        if issue.aliases:
            meta.append("aliases " + ", ".join(issue.aliases))
        console.print(Text(" · ".join(meta), style="dim"))
        console.print(Text("upstream: " + ", ".join(issue.upstream), style="dim"))
        if issue.affected:
            console.print(Text("affected: " + ", ".join(f"{k} {v}" for k, v in issue.affected.items()),
                               style="dim"))
        if issue.fixed:
            console.print(Text("fixed in: " + ", ".join(f"{k} {v}" for k, v in issue.fixed.items()),
                               style="dim"))
        console.print()
        page = doc.get("page")
        if page:
            console.print(Markdown(page) if use_color() else Text(page))
        else:
            console.print(Text(issue.summary))
        runnable = [w for w in issue.workarounds if w.command]
        if runnable:
            console.print()
            console.print(Text("Workarounds you can run:", style="bold"))
            for w in runnable:
                only = ", ".join(f"{k}{v}" for k, v in w.applies.items())
                console.print(Text(f"  # {w.text}" + (f" (only {only})" if only else ""), style="dim"))
                console.print(Text(f"  {w.command}", style="cyan"))
        source = doc.get("canary_source")
        if source and issue.canary is not None:
            console.print()
            console.print(Text(f"Reproducer ({issue.canary.script}; run: python {issue.canary.script} "
                               f"{issue.canary.devices[0].value}):", style="bold"))
            console.print(Syntax(source, "python", theme="ansi_dark") if use_color() else Text(source))
        console.print()
        console.print(Text(f"check it here: inductor-doctor check --only {issue.id}", style="dim"))

    return console_to_string(render)
