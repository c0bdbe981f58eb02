"""The fleet view at a terminal: groups of identical columns, the differences apart.

It reads only the `merge/v1` document, so what a person sees is exactly what `--format json` holds.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from inductor_doctor.core.hostlist import column_parts, count_phrase, pieces
from inductor_doctor.render.fleet_cache import cache_lines
from inductor_doctor.render.plain import wrap
from inductor_doctor.render.style import STATUS as STYLE
from inductor_doctor.render.style import console_to_string, hanging, paragraph, summary_line

WORRYING = ("affected", "likely", "inconclusive")
MAX_FIELDS_SHOWN = 12
#: Names in one line of the view before it says "and N more": a fleet's view fits a screen.
MAX_PARTS = 6
#: A group's members under the matrix: fewer, since every group has such a line.
LEGEND_PARTS = 4


def others(columns: Sequence[str], limit: int = 4) -> str:
    if len(columns) <= limit:
        return ", ".join(columns)
    return f"{len(columns)} columns"


def named(doc: Mapping[str, Any], columns: Sequence[str], limit: int = MAX_PARTS) -> str:
    """Columns as hosts print them: `node[1710,1800,1890]/cpu`, at most `limit` parts, then how
    many more (`--format json` has them all)."""
    known = {c["name"]: c for c in doc.get("columns") or []}
    cols = [known.get(n) or {"name": n, "source": n, "device": ""} for n in columns]
    parts = column_parts(cols)
    return cut(parts, limit)


def cut(parts: Sequence[str], limit: int = MAX_PARTS) -> str:
    if len(parts) <= limit:
        return ", ".join(parts)
    return ", ".join(parts[:limit]) + f" and {len(parts) - limit} more (--format json lists them)"


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
        majority = _majority(statuses)
        parts = [f"{s} on {named(doc, cols)}" for s, cols in statuses.items() if s != majority]
        n = len(statuses[majority])
        rest = named(doc, statuses[majority]) if n <= 3 else f"the {n} others"
        lines.append(f"{row['id']}: {'; '.join(parts)} (and {majority} on {rest})")
    return lines


def _majority(statuses: Mapping[str, Sequence[str]]) -> str:
    """The status most columns have; on a tie the better one, so that the worse is the one named."""
    order = ("affected", "likely", "inconclusive", "ok", "not-applicable")
    return max(statuses, key=lambda s: (len(statuses[s]), order.index(s) if s in order else -1))


def field_lines(doc: Mapping[str, Any], limit: int = MAX_FIELDS_SHOWN) -> List[str]:
    diffs = list((doc.get("environment") or {}).get("differences") or [])
    # The compile stack first, then packages, then environment variables.
    diffs.sort(key=lambda d: (d["field"].startswith("env."), d["field"].startswith("packages.")))
    lines = []
    for d in diffs[:limit]:
        values = list(d["values"])
        majority = max(values, key=lambda v: len(v["sources"]))
        if len(majority["sources"]) > 3:  # the many counted, last; the few named
            shown = [f"{v['value']} on {cut(pieces(v['sources']))}" for v in values if v is not majority]
            shown.append(f"{majority['value']} on the other {len(majority['sources'])}")
        else:
            shown = [f"{v['value']} on {cut(pieces(v['sources']))}" for v in values]
        lines.append(f"{d['label']}: " + "; ".join(shown))
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more (see --format json)")
    return lines


def idle_lines(doc: Mapping[str, Any]) -> List[str]:
    """Reports with no results: a rank with no GPU of its own on a CPU node, say."""
    out = []
    for s in doc.get("sources", []):
        if not s.get("devices"):
            out.append(f"{_who(s)} had no device of its own to check")
    return out


def _who(source: Mapping[str, Any]) -> str:
    """A report as differences name it: `host@rank1`, or the host with its rank beside it."""
    name = str(source.get("name") or source["label"])
    rank = source.get("rank")
    return name if "@" in name or rank is None else f"{name} (rank {rank})"


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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def header(doc: Mapping[str, Any], shown_columns: Optional[int] = None) -> str:
    """What was merged, counted as the table below shows it: `shown_columns` is the number of
    columns the table has (groups of identical host/device columns), the raw count beside it."""
    meta = doc.get("meta") or {}
    hosts = [s.get("hostname") or s.get("label") for s in doc.get("sources") or []]
    names = count_phrase([str(h) for h in hosts if h], limit=40)
    n_hosts = int(meta.get("hosts", 0))
    where = f" ({names})" if names and not names.endswith(" hosts") and n_hosts > 3 else ""
    columns = len(doc.get("groups") or []) if shown_columns is None else shown_columns
    raw = int(meta.get("columns", 0))
    parts = [
        f"inductor-doctor {doc['tool_version']} merge",
        _plural(int(meta.get("reports", 0)), "report"),
        _plural(n_hosts, "host") + where,
        _plural(columns, "column") + (f" ({raw} host/device pairs)" if raw != columns else ""),
        f"knowledge base {doc['kb_version']}",
    ]
    return " · ".join(parts)


def differing_hosts(doc: Mapping[str, Any]) -> List[str]:
    """The hosts that are not like the majority (a status or a probe field), in fleet order."""
    source_of = {c["name"]: c["source"] for c in doc.get("columns") or []}
    odd: Dict[str, None] = {}
    for row in doc.get("issues") or []:
        statuses = row.get("statuses") or {}
        if len(statuses) < 2:
            continue
        majority = _majority(statuses)
        for status, cols in statuses.items():
            if status != majority:
                odd.update({source_of.get(c, c): None for c in cols})
    for d in (doc.get("environment") or {}).get("differences") or []:
        values = sorted(d["values"], key=lambda v: -len(v["sources"]))
        for v in values[1:]:
            odd.update({str(src): None for src in v["sources"]})
    order: Dict[str, int] = {}
    for n, s in enumerate(doc.get("sources") or []):
        order.setdefault(s["label"], n)
        order.setdefault(s.get("name") or s["label"], n)
    return sorted(odd, key=lambda h: order.get(h, len(order)))


def shown_groups(groups: Sequence[Mapping[str, Any]], issues: Sequence[Mapping[str, Any]],
                 show_all: bool) -> tuple:
    """(rows, groups, folded) as the matrix shows them: rows that are not-applicable everywhere
    folded, and the columns with nothing but n/a and blanks in the rows shown left out."""
    rows = [r for r in issues if show_all or not _all_na(r)]
    folded = len(issues) - len(rows)
    if not show_all:
        groups = [g for g in groups
                  if any(g["statuses"].get(r["id"]) not in (None, "not-applicable") for r in rows)] or groups
    return rows, list(groups), folded


def _all_na(row: Mapping[str, Any]) -> bool:
    return set(row.get("statuses") or {}) <= {"not-applicable"}


def merge_text(doc: Mapping[str, Any], show_all: bool = False) -> str:
    groups = doc.get("groups", [])
    issues = doc.get("issues", [])

    rows, columns, folded = shown_groups(groups, issues, show_all)

    def render(console: Console) -> None:
        paragraph(console, header(doc, len(columns) if issues else 0), "bold")
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
            _matrix(console, doc, rows, columns, folded, show_all)
        else:
            console.print("no results in these reports\n")
        odd = differing_hosts(doc)
        if len(odd) > 3:
            total = int((doc.get("meta") or {}).get("hosts", 0))
            console.print(Text(f"Hosts that differ from the rest ({len(odd)} of {total}):", style="bold"))
            paragraph(console, ", ".join(pieces(odd)), indent=2)
            console.print()
        diffs = difference_lines(doc)
        if diffs:
            console.print(Text("Differences between columns:", style="bold"))
            for line in diffs:
                hanging(console, "", line, 2)
            console.print()
        for entry in detail_groups(doc):
            r = entry["result"]
            first = f"{r['status'].upper()}  {r['id']} "
            for n, line in enumerate(wrap(f"on {named(doc, entry['columns'])}: {r['title']}", console.width,
                                          first, "")):
                text = Text(line)
                if n == 0:
                    text.stylize(STYLE[r["status"]], 0, len(r["status"]))
                    text.stylize("bold", len(r["status"]) + 2, len(first) - 1)
                console.print(text, no_wrap=True, crop=False, overflow="ignore")
            paragraph(console, r["reason"], indent=4)
            for w in r.get("workarounds") or []:
                hanging(console, "-", w["text"], 4)
                if w.get("command"):
                    hanging(console, "$", w["command"], 8, "cyan")
            console.print()
        fields = field_lines(doc)
        if fields:
            console.print(Text("Probe fields that differ:", style="bold"))
            for line in fields:
                hanging(console, "", line, 2)
            console.print()
        caches = cache_lines(doc)  # who will miss what another compiled (fleet/cache_keys.py)
        if caches:
            hanging(console, "", caches[0], 0, "bold")
            for line in caches[1:]:
                hanging(console, "", line.strip(), 2)
            console.print()
        for m in doc.get("missing", []):
            console.print(Text(f"MISSING {m['name']}: {m['reason']}", style="bold magenta"))
        for line in idle_lines(doc):
            console.print(Text(f"note: {line}", style="dim"))
        for s in doc.get("sources", []):
            if s.get("interrupted"):
                note = f"note: the report of {_who(s)} is partial (interrupted)"
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


def _matrix(console: Any, doc: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
            groups: Sequence[Mapping[str, Any]], folded: int, show_all: bool = False) -> None:
    """Issues by column groups, fitted to the reader's width: ids whole; long group labels become
    `#1`, `#2` with a legend; rows that are not-applicable everywhere folded into one line. Where
    even numbered columns do not fit, each issue is a line, and those ok on every column one line."""
    from rich import box
    from rich.text import Text

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
        if numbered:
            for i, g in enumerate(groups, start=1):
                paragraph(console, f"#{i} = {_legend(g)}", "dim", 2)
        else:
            for g in groups:
                if len(g["columns"]) > 1:
                    paragraph(console, _legend(g), "dim", 2)
    elif rows:  # too many columns for any matrix: each issue on its own line, its verdicts by column
        uniform_ok = [r["id"] for r in rows if set(r.get("statuses") or {}) <= {"ok", "not-applicable"}
                      and "ok" in (r.get("statuses") or {})]
        if len(uniform_ok) > 1:
            listed = f"ok on every column ({len(uniform_ok)}): " + ", ".join(uniform_ok)
            if len(listed) > 2 * width and not show_all:  # a fleet's summary fits a screen
                listed = f"{len(uniform_ok)} more are ok on every column; `--all` lists them"
            paragraph(console, listed)
        for row in rows:
            if row["id"] in uniform_ok and len(uniform_ok) > 1:
                continue
            line = Text(row["id"], style="bold")
            for status, cols in (row.get("statuses") or {}).items():
                if status == "not-applicable":
                    continue
                line.append(f"  {status}", style=STYLE.get(status, ""))
                line.append(f" on {named(doc, cols, 3) if len(cols) <= 3 else _plural(len(cols), 'column')}")
            console.print(line)
        for g in groups:
            paragraph(console, _legend(g), "dim", 2)
    if folded:
        console.print(Text(f"{folded} more cannot arise anywhere here (not-applicable); `--all` lists them",
                           style="dim"))
    console.print()


def _legend(group: Mapping[str, Any]) -> str:
    """A group's label and, where it has several columns, its members as hosts print them."""
    if len(group["columns"]) <= 1:
        return str(group["label"])
    parts = [p.strip() for p in str(group["members"]).split(", ")]
    return f"{group['label']}: {cut(parts, LEGEND_PARTS)}"
