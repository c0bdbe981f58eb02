"""The text form of a triage: best match first, its evidence lines, what to do, how to confirm.

It renders the same dictionary the JSON output is, so the two cannot say different things.
Colour only on a terminal, never with NO_COLOR (the shared `render.style` console rules).
"""

from __future__ import annotations

import shlex
from typing import Any, List, Mapping

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from inductor_doctor.render.style import CONFIDENCE, console_to_string, hanging


def _versions_line(versions: Mapping[str, List[str]]) -> str:
    names = {"torch-xla": "torch_xla"}
    return ", ".join(f"{names.get(k, k)} {' / '.join(v)}" for k, v in versions.items())


def render(data: Mapping[str, Any], **_: Any) -> str:
    env = data["environment"]
    log = env["log"]
    results = data["results"]
    matched = [r for r in results if r["confidence"] != "version-only"]
    hints = [r for r in results if r["confidence"] == "version-only"]

    def render(console: Console) -> None:
        console.print(
            Text(
                f"inductor-doctor {data['tool_version']} · knowledge base {data['kb_version']}", style="bold"
            )
        )
        source = "stdin" if log["source"] == "-" else log["source"]
        head = f"log: {source} · {log['lines']:,} lines"
        if env.get("versions"):
            head += f" · mentions {_versions_line(env['versions'])}"
        if log.get("truncated"):
            head += " · only its first and last parts were read"
        console.print(Text(head, style="dim"))
        console.print()
        if not matched:
            console.print(Text("no known issue matched this log", style="bold"))
            if hints:
                console.print("the versions it mentions are in the affected range of:")
                for r in hints:
                    line = Text("  • ")
                    line.append(r["id"], style="bold")
                    line.append(f" — {r['title']} ({r['note']})")
                    console.print(line)
                console.print(
                    Text("no error text of theirs is in the log, so these are only hints", style="dim")
                )
            _check(console, data.get("check") or {})  # a possible match this machine decided against
            return
        n = len(matched)
        console.print(Text(f"{n} known issue{'s' if n != 1 else ''} matched, best first", style="bold"))
        source = "-" if log["source"] == "-" else shlex.quote(log["source"])
        for index, r in enumerate(matched, start=1):
            console.print()
            _match(console, index, r, source)
        _check(console, data.get("check") or {})
        summary = data.get("summary") or {}
        if summary.get("diagnosed") is False:
            console.print()
            console.print(Text("no sure match, so this exits 1 (with --match possible, a \"looks like\" or "
                               "\"possibly\" exits 0)", style="dim"))

    text = console_to_string(render)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _match(console: Console, index: int, r: Mapping[str, Any], log_source: str) -> None:
    """"this is X" for an anchored exact match; "this looks like X" with its reasons otherwise."""
    title = Text(f"{index}. ")
    title.append(r["assessment"], style=CONFIDENCE[r["confidence"]])
    if r["severity"] != "error":
        title.append(f"  ({r['severity']})", style="dim")
    console.print(title)
    console.print(Text(f"   {r['title']}"))
    if r["evidence"]:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", justify="right", no_wrap=True)
        grid.add_column(overflow="fold")
        for ev in r["evidence"]:
            for offset, line in enumerate(ev["text"]):
                grid.add_row(f"line {ev['line'] + offset} │", Text(line))
        console.print(Padding(grid, (0, 0, 0, 3)))
    if r["occurrences"] > len(r["evidence"]):
        console.print(Text(f"   ({r['occurrences']} occurrences in all)", style="dim"))
    if r.get("because"):
        console.print(Padding(Text("because " + "; and ".join(r["because"]), style="yellow"), (0, 0, 0, 3)))
        check = f"check with: inductor-doctor explain --log {log_source} --check"
        if r.get("decided_by"):  # possibly: the log cannot tell, this machine can
            check = f"decided by {r['decided_by']}: run `inductor-doctor explain --log {log_source} --check`"
        console.print(Padding(Text(check, style="dim"), (0, 0, 0, 3)))
    elif r.get("note"):
        style = "green" if r.get("version_in_range") else "yellow"
        console.print(Padding(Text(r["note"], style=style), (0, 0, 0, 3)))
    if r["workarounds"]:
        console.print("   workarounds:")
        for w in r["workarounds"]:  # a command stands whole on its own line, never wrapped
            hanging(console, "•", w["text"], 5, "dim" if w.get("moot") else "")
            if w.get("command"):
                hanging(console, "$", w["command"], 7, "dim" if w.get("moot") else "cyan")
            if w.get("moot"):
                hanging(console, "", f"({w['moot']})", 7, "dim")
    console.print(Text(f"   more: {r['explain']}", style="dim"))


def _check(console: Console, check: Mapping[str, Any]) -> None:
    if not check.get("command"):
        return
    console.print()
    if not check.get("available"):
        console.print(Text(f"to confirm on a machine with torch: {check['command']}", style="bold"))
        if check.get("reason"):
            console.print(Text(f"  ({check['reason']})", style="dim"))
        return
    if not check.get("ran"):
        console.print(Text(f"confirm here: {check['command']}   (or add --check)", style="bold"))
        return
    console.print(Text(f"checked here with: {check['command']}", style="bold"))
    if check.get("error"):
        console.print(Text(f"  the check did not complete: {check['error']}", style="yellow"))
    results = check.get("results", [])
    for f in results:
        line = Text(f"  {f['id']} on {f['device']}: ")
        line.append(f["status"], style=_STATUS_STYLE.get(f["status"], ""))
        line.append(f" — {f['reason']}")
        console.print(line)
    if results and all(f["status"] in ("ok", "not-applicable") for f in results):
        console.print(
            Text("  nothing here reproduces it: the log likely comes from another environment", style="dim")
        )


_STATUS_STYLE = {
    "affected": "bold red",
    "likely": "yellow",
    "inconclusive": "magenta",
    "ok": "green",
    "not-applicable": "dim",
}
