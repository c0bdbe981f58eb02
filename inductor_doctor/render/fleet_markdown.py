"""The fleet view as Markdown, for a ticket or a CI summary (redacted by default)."""

from __future__ import annotations

from typing import Any, List, Mapping

from inductor_doctor.render.fleet_cache import cache_lines
from inductor_doctor.render.fleet_text import detail_groups, difference_lines, field_lines, header, others
from inductor_doctor.render.style import summary_line


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(doc: Mapping[str, Any], **_: Any) -> str:
    out: List[str] = [f"### {_md(header(doc))}", ""]
    groups = doc.get("groups", [])
    issues = doc.get("issues", [])
    if issues:
        out.append("| issue | " + " | ".join(_md(g["label"]) for g in groups) + " |")
        out.append("|---|" + "---|" * len(groups))
        for row in issues:
            cells = [g["statuses"].get(row["id"], "·") for g in groups]
            out.append(f"| `{row['id']}` | " + " | ".join(_md(c) for c in cells) + " |")
        out.append("")
        for g in groups:
            if len(g["columns"]) > 1:
                out.append(f"- **{_md(g['label'])}**: {_md(g['members'])}")
        out.append("")
    diffs = difference_lines(doc)
    if diffs:
        out += ["#### Differences between columns", ""] + [f"- {_md(d)}" for d in diffs] + [""]
    for entry in detail_groups(doc):
        r = entry["result"]
        out.append(f"#### `{r['id']}` {r['status']} on {_md(others(entry['columns'], 6))}")
        out.append("")
        out.append(f"{_md(r['title'])}. {_md(r['reason'])}")
        for w in r.get("workarounds") or []:
            out.append(f"- {_md(w['text'])}" + (f": `{w['command']}`" if w.get("command") else ""))
        out.append("")
    fields = field_lines(doc)
    if fields:
        out += ["#### Probe fields that differ", ""] + [f"- {_md(f)}" for f in fields] + [""]
    caches = cache_lines(doc)
    if caches:
        out += ["#### Compile caches", "", _md(caches[0]), ""] + [f"- {_md(c.strip())}" for c in caches[1:]]
        out += [""] if len(caches) > 1 else []
    for m in doc.get("missing", []):
        out.append(f"- **missing** {_md(m['name'])}: {_md(m['reason'])}")
    if doc.get("missing"):
        out.append("")
    out.append(f"**Summary:** {summary_line(doc.get('summary', {}))}")
    return "\n".join(out) + "\n"


