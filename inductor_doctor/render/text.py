"""Text output for people at a terminal: colour only on a TTY, and never when NO_COLOR is set."""

from __future__ import annotations

import io
import os
import shutil
import sys
from typing import Any, Dict, Iterable, List, Mapping, Optional

from rich.console import Console
from rich.table import Table
from rich.text import Text

STYLE = {
    "affected": "bold red",
    "likely": "yellow",
    "inconclusive": "magenta",
    "ok": "green",
    "not-applicable": "dim",
}
ORDER = ["affected", "likely", "inconclusive", "ok", "not-applicable"]


def use_color(stream: Any = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def console_to_string(render: Any, width: Optional[int] = None) -> str:
    """Render rich objects to a string, as plain text unless stdout is a colour terminal."""
    color = use_color()
    buf = io.StringIO()
    width = width or max(80, min(shutil.get_terminal_size((120, 40)).columns, 160))
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        width=width,
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
    )
    render(console)
    return buf.getvalue()


def _env_line(env: Mapping[str, Any]) -> str:
    parts: List[str] = []
    py = env.get("python") or {}
    if py.get("version"):
        parts.append(f"Python {py['version']}")
    torch = env.get("torch")
    parts.append(f"torch {torch.get('version')}" if torch else "torch not installed")
    triton = env.get("triton")
    if triton and triton.get("version"):
        parts.append(f"triton {triton['version']}")
    xla = env.get("xla")
    if xla and xla.get("version"):
        parts.append(f"torch_xla {xla['version']}")
    cxx = env.get("cxx") or {}
    if cxx.get("command"):
        parts.append(f"{cxx.get('command')} {cxx.get('version') or '?'}")
    gpus = (env.get("cuda") or {}).get("gpus") or []
    if gpus:
        names = sorted({g.get("name", "?") for g in gpus})
        parts.append(f"{len(gpus)} GPU(s): {', '.join(names)}")
    else:
        parts.append("no GPU")
    host = env.get("host") or {}
    if host.get("hostname"):
        parts.insert(0, str(host["hostname"]))
    return " · ".join(parts)


def status_text(status: str, suppressed: bool = False) -> Text:
    label = status + (" (suppressed)" if suppressed else "")
    return Text(label, style="dim" if suppressed else STYLE.get(status, ""))


def _devices(results: Iterable[Mapping[str, Any]]) -> List[str]:
    seen: List[str] = []
    for r in results:
        if r["device"] not in seen:
            seen.append(r["device"])
    rank = {"toolchain": 0, "cpu": 1, "cuda": 2, "xla": 9}
    return sorted(seen, key=lambda d: (rank.get(d.split(":")[0], 5), d))


def matrix_table(results: List[Mapping[str, Any]], title: Optional[str] = None) -> Table:
    devices = _devices(results)
    table = Table(title=title, show_lines=False, header_style="bold", expand=False)
    table.add_column("issue", no_wrap=True)
    for d in devices:
        table.add_column(d, no_wrap=True)
    rows: Dict[str, Dict[str, Mapping[str, Any]]] = {}
    for r in results:
        rows.setdefault(r["id"], {})[r["device"]] = r
    for issue_id, cells in rows.items():
        row: List[Any] = [issue_id]
        for d in devices:
            r = cells.get(d)
            row.append(status_text(r["status"], bool(r.get("suppressed"))) if r else Text("·", style="dim"))
        table.add_row(*row)
    return table


def _details(console: Console, results: List[Mapping[str, Any]]) -> None:
    worrying = [r for r in results if r["status"] in ("affected", "likely", "inconclusive")]
    worrying.sort(key=lambda r: ORDER.index(r["status"]))
    for r in worrying:
        head = Text()
        head.append(f"{r['status'].upper()}", style=STYLE[r["status"]])
        head.append(f"  {r['id']}", style="bold")
        head.append(f" on {r['device']}: {r['title']}")
        if r.get("severity") == "warning":
            head.append(" [warning]", style="yellow")
        console.print(head)
        console.print(Text(f"    {r['reason']}"))
        for line in r.get("evidence") or []:
            console.print(Text(f"    | {line}", style="dim"))
        if r.get("suppressed"):
            console.print(Text(f"    suppressed: {r['suppressed']}", style="dim"))
        for w in r.get("workarounds") or []:
            console.print(Text(f"    - {w['text']}"))
            if w.get("command"):
                console.print(Text(f"        $ {w['command']}", style="cyan"))
        if r.get("upstream"):
            console.print(Text(f"    refs: {', '.join(r['upstream'])}", style="dim"))
        console.print(Text(f"    more: inductor-doctor explain {r['id']}", style="dim"))
        console.print()


def summary_line(summary: Mapping[str, int]) -> str:
    return ", ".join(f"{summary.get(s, 0)} {s}" for s in ORDER)


def report_text(data: Mapping[str, Any]) -> str:
    results = list(data.get("results", []))
    meta = data.get("meta", {}) or {}

    def render(console: Console) -> None:
        console.print(
            Text(
                f"inductor-doctor {data['tool_version']} · knowledge base {data['kb_version']}", style="bold"
            )
        )
        console.print(Text(_env_line(data.get("environment", {})), style="dim"))
        console.print()
        if results:
            console.print(matrix_table(results))
            console.print()
            _details(console, results)
        else:
            console.print("no known issue selected")
        tail = summary_line(data.get("summary", {}))
        extra = []
        if meta.get("cached"):
            extra.append("cached result; --no-cache to re-run")
        if meta.get("static"):
            extra.append("static checks only")
        if meta.get("duration_s") is not None:
            extra.append(f"{meta['duration_s']:.1f}s")
        console.print(Text(tail + (f"  ({'; '.join(extra)})" if extra else ""), style="bold"))
        for note in meta.get("suppression_notes") or []:
            console.print(Text(f"note: {note}", style="yellow"))
        for err in meta.get("plugin_errors") or []:
            console.print(
                Text(f"note: plugin {err['entry_point']} failed to load: {err['error']}", style="yellow")
            )
        if meta.get("interrupted"):
            console.print(Text("interrupted: partial results", style="bold red"))

    return console_to_string(render)


def list_text(reg: Any) -> str:
    def render(console: Console) -> None:
        table = Table(header_style="bold")
        table.add_column("id", no_wrap=True)
        table.add_column("title")
        table.add_column("devices", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("upstream")
        for issue in reg:
            table.add_row(
                issue.id,
                issue.title,
                ", ".join(d.value for d in issue.devices),
                issue.severity.value,
                ", ".join(issue.upstream),
            )
        console.print(table)
        console.print(Text(f"{len(reg)} known issues", style="dim"))
        for name, err in reg.plugin_errors:
            console.print(Text(f"note: plugin {name} failed to load: {err}", style="yellow"))

    return console_to_string(render)
