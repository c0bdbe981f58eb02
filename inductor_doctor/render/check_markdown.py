"""Markdown output, for pasting into a bug report or a CI summary (redacted by default)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

from inductor_doctor.render.check_text import COMPILED, device_order, env_line
from inductor_doctor.render.style import ORDER, summary_line

ICON = {"affected": "❌", "likely": "⚠️", "inconclusive": "❔", "ok": "✅", "not-applicable": "➖"}


def _cell(r: Mapping[str, Any]) -> str:
    text = f"{ICON.get(r['status'], '')} {r['status']}"
    if r.get("proved") == "compiled" and r["status"] != "not-applicable":
        text += COMPILED  # compiled for a GPU that is not here, never run there
    return text + " (suppressed)" if r.get("suppressed") else text


def _esc(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(data: Mapping[str, Any], **_: Any) -> str:
    results: List[Mapping[str, Any]] = list(data.get("results", []))
    out: List[str] = [
        f"### inductor-doctor {data['tool_version']} (knowledge base {data['kb_version']})",
        "",
        f"`{_esc(env_line(data.get('environment', {})))}`",
        "",
    ]
    for notice in (data.get('meta') or {}).get('notices') or []:
        out += [f"> **{_esc(notice)}**", ""]
    if results:
        devices = sorted({r['device'] for r in results}, key=device_order)
        out.append("| issue | " + " | ".join(devices) + " |")
        out.append("|---|" + "---|" * len(devices))
        rows: Dict[str, Dict[str, Mapping[str, Any]]] = {}
        for r in results:
            rows.setdefault(r["id"], {})[r["device"]] = r
        for issue_id, cells in rows.items():
            out.append(
                f"| `{issue_id}` | "
                + " | ".join(_cell(cells[d]) if d in cells else "·" for d in devices)
                + " |"
            )
        out.append("")
    worrying = sorted(
        (r for r in results if r["status"] in ("affected", "likely", "inconclusive")),
        key=lambda r: ORDER.index(r["status"]),
    )
    for r in worrying:
        out.append(f"#### {ICON[r['status']]} `{r['id']}` on `{r['device']}`: {r['status']}")
        out.append("")
        out.append(f"{_esc(r['title'])}. {_esc(r['reason'])}")
        if r.get("evidence"):
            out += ["", "```", *r["evidence"], "```"]
        for w in r.get("workarounds") or []:
            out.append(f"- {_esc(w['text'])}" + (f": `{w['command']}`" if w.get("command") else ""))
        if r.get("upstream"):
            out.append(f"- upstream: {', '.join(r['upstream'])}")
        out.append("")
    if any(r.get("proved") == "compiled" and r["status"] != "not-applicable" for r in results):
        out.append(f"{COMPILED} compiled for that GPU here (no such GPU here): loading and launching there "
                   "unproven")
        out.append("")
    out.append(f"**Summary:** {summary_line(data.get('summary', {}))}")
    return "\n".join(out) + "\n"
