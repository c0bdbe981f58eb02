"""The fleet view at a terminal: groups of identical columns, the differences apart.

It reads only the `merge/v1` document, so what a person sees is exactly what `--format json` holds.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from inductor_doctor.render.style import STATUS as STYLE
from inductor_doctor.render.style import console_to_string, summary_line

WORRYING = ("affected", "likely", "inconclusive")
MAX_FIELDS_SHOWN = 12


def others(columns: Sequence[str], limit: int = 4) -> str:
    if len(columns) <= limit:
        return ", ".join(columns)
    return f"{len(columns)} columns"


def difference_lines(doc: Mapping[str, Any]) -> List[str]:
    """One line per issue whose status differs between columns: the minority named, the majority counted."""
    lines: List[str] = []
    missing = {m["name"] for m in doc.get("missing", [])}  # said once, in their own lines
    for row in doc.get("issues", []):
        statuses: Dict[str, List[str]] = {}
        for status, cols in row["statuses"].items():
            kept = [c for c in cols if c not in missing]
            if kept:
                statuses[status] = kept
        if len(statuses) < 2:
            continue
        majority = max(statuses, key=lambda s: len(statuses[s]))
        parts = [f"{s} on {', '.join(cols)}" for s, cols in statuses.items() if s != majority]
        n = len(statuses[majority])
        rest = ", ".join(statuses[majority]) if n <= 3 else f"the {n} others"
        lines.append(f"{row['id']}: {'; '.join(parts)} (and {majority} on {rest})")
    return lines


def field_lines(doc: Mapping[str, Any], limit: int = MAX_FIELDS_SHOWN) -> List[str]:
    diffs = list((doc.get("environment") or {}).get("differences") or [])
    # The compile stack first, then packages, then environment variables.
    diffs.sort(key=lambda d: (d["field"].startswith("env."), d["field"].startswith("packages.")))
    lines = []
    for d in diffs[:limit]:
        values = "; ".join(f"{v['value']} on {', '.join(v['sources'])}" for v in d["values"])
        lines.append(f"{d['label']}: {values}")
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more (see --format json)")
    return lines


def idle_lines(doc: Mapping[str, Any]) -> List[str]:
    """Reports with no results: a rank with no GPU of its own on a CPU node, say."""
    out = []
    for s in doc.get("sources", []):
        if not s.get("devices"):
            rank = f" (rank {s['rank']})" if s.get("rank") is not None else ""
            out.append(f"{s['label']}{rank} had no device of its own to check")
    return out


def detail_groups(doc: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Worrying results, one entry per (issue, status, reason) with every column that shares it."""
    out: Dict[Any, Dict[str, Any]] = {}
    for r in doc.get("results", []):
        if r["status"] not in WORRYING or r["device"] == "all":  # a missing rank: its own line
            continue
        key = (r["id"], r["status"], r["reason"])
        entry = out.setdefault(key, {"result": r, "columns": []})
        entry["columns"].append(r["column"])
    return sorted(out.values(), key=lambda e: WORRYING.index(e["result"]["status"]))


def header(doc: Mapping[str, Any]) -> str:
    meta = doc.get("meta") or {}
    parts = [
        f"inductor-doctor {doc['tool_version']} merge",
        f"{meta.get('reports', 0)} report(s)",
        f"{meta.get('hosts', 0)} host(s)",
        f"{meta.get('columns', 0)} column(s)",
        f"knowledge base {doc['kb_version']}",
    ]
    return " · ".join(parts)


def merge_text(doc: Mapping[str, Any], show_all: bool = False) -> str:
    groups = doc.get("groups", [])
    issues = doc.get("issues", [])

    def render(console: Console) -> None:
        console.print(Text(header(doc), style="bold"))
        common = (doc.get("environment") or {}).get("common") or {}
        shown = [
            f"{k} {common[k]}"
            for k in ("torch", "triton", "python", "driver")
            if common.get(k) not in (None, "unknown")
        ]
        if shown:
            console.print(Text("everywhere: " + " · ".join(shown), style="dim"))
        console.print()
        if issues:
            _matrix(console, groups, issues, show_all)
        else:
            console.print("no results in these reports\n")
        diffs = difference_lines(doc)
        if diffs:
            console.print(Text("Differences between columns:", style="bold"))
            for line in diffs:
                console.print(Text(f"  {line}"))
            console.print()
        for entry in detail_groups(doc):
            r = entry["result"]
            head = Text()
            head.append(r["status"].upper(), style=STYLE[r["status"]])
            head.append(f"  {r['id']}", style="bold")
            head.append(f" on {others(entry['columns'], 6)}: {r['title']}")
            console.print(head)
            console.print(Text(f"    {r['reason']}"))
            for w in r.get("workarounds") or []:
                console.print(Text(f"    - {w['text']}"))
                if w.get("command"):
                    console.print(Text(f"        $ {w['command']}", style="cyan"))
            console.print()
        fields = field_lines(doc)
        if fields:
            console.print(Text("Probe fields that differ:", style="bold"))
            for line in fields:
                console.print(Text(f"  {line}"))
            console.print()
        for m in doc.get("missing", []):
            console.print(Text(f"MISSING {m['name']}: {m['reason']}", style="bold magenta"))
        for line in idle_lines(doc):
            console.print(Text(f"note: {line}", style="dim"))
        for s in doc.get("sources", []):
            if s.get("interrupted"):
                note = f"note: the report of {s['label']} is partial (interrupted)"
                console.print(Text(note, style="yellow"))
        for note in (doc.get("meta") or {}).get("notes", []):
            console.print(Text(f"note: {note}", style="yellow"))
        console.print(Text(summary_line(doc.get("summary", {})), style="bold"))

    return console_to_string(render)


def render(data: Mapping[str, Any], show_all: bool = False, **_: Any) -> str:
    return merge_text(data, show_all)


def _cell(status: Optional[str]) -> Any:
    from rich.text import Text

    if not status:
        return Text("·", style="dim")
    return Text("n/a" if status == "not-applicable" else status, style=STYLE.get(status, ""))


def _matrix(console: Any, groups: Sequence[Mapping[str, Any]], issues: Sequence[Mapping[str, Any]],
            show_all: bool) -> None:
    """Issues by column groups, fitted to the reader's width: ids whole; long group labels become
    `#1`, `#2` with a legend; rows that are not-applicable everywhere folded into one line."""
    from rich import box
    from rich.text import Text

    def all_na(row: Mapping[str, Any]) -> bool:
        return set(row.get("statuses") or {}) <= {"not-applicable"}

    rows = [r for r in issues if show_all or not all_na(r)]
    folded = len(issues) - len(rows)
    if not show_all:  # a column with nothing but n/a and blanks in the rows shown says nothing
        groups = [g for g in groups
                  if any(g["statuses"].get(r["id"]) not in (None, "not-applicable") for r in rows)] or groups
    width = console.width
    id_width = max((len(r["id"]) for r in rows), default=5)
    cell_width = max([len(_cell(g["statuses"].get(r["id"])).plain) for r in rows for g in groups] + [3])
    labels = [g["label"] for g in groups]
    full = id_width + sum(max(len(lb), cell_width) + 2 for lb in labels) + 2
    numbered = full > width
    heads = [f"#{i}" for i in range(1, len(groups) + 1)] if numbered else labels
    needed = id_width + sum(max(len(h), cell_width) + 2 for h in heads) + 2
    if rows and needed <= width:
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False)
        table.add_column("issue", no_wrap=True, min_width=id_width)
        for head in heads:
            table.add_column(head, no_wrap=True)
        for row in rows:
            table.add_row(row["id"], *[_cell(g["statuses"].get(row["id"])) for g in groups])
        console.print(table)
    elif rows:  # too many columns for any matrix: each issue on its own line, its verdicts by column
        for row in rows:
            line = Text(row["id"], style="bold")
            for status, cols in (row.get("statuses") or {}).items():
                if status == "not-applicable":
                    continue
                line.append(f"  {status}", style=STYLE.get(status, ""))
                line.append(f" on {others(cols, 3)}")
            console.print(line)
        numbered = False
    if numbered:
        for i, g in enumerate(groups, start=1):
            console.print(Text(f"  #{i} = {g['label']}", style="dim"))
    for g in groups:
        if len(g["columns"]) > 1:
            console.print(Text(f"  {g['label']}: {g['members']}", style="dim"))
    if folded:
        console.print(Text(f"{folded} more cannot arise anywhere here (not-applicable); `--all` lists them",
                           style="dim"))
    console.print()
