"""`why`'s answer: the conclusion first (one sentence), its evidence, then every variation's outcome."""

from __future__ import annotations

from typing import Any, Mapping

from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import BAD, DIM, GOOD, STRONG, WARN, terminal_width, use_color

_STYLE = {"passed": GOOD, "fails the same way": BAD, "fails differently": WARN, "timed out": WARN,
          "not run": DIM, "stopped": DIM}


def render(data: Mapping[str, Any], **_: Any) -> str:
    out = Writer(terminal_width(), use_color())
    c = data["conclusion"]
    base = data["baseline"]
    out.line(f"inductor-doctor why · {data['command_line']}", STRONG)
    status = "passed" if base["exit_code"] == 0 else f"exit {base['exit_code']}"
    if base["timed_out"]:
        status = "timed out"
    out.para(f"as it is: {status} in {base['duration_s']}s" + (f": {base['error_line']}" if base["error_line"]
                                                                  else ""), indent=2, style=DIM)
    triage = data.get("triage") or {}
    if base["exit_code"] != 0:
        if triage.get("matched"):
            out.para(f"triage of its output: {triage['assessment']} ({triage['confidence']} match)", indent=2,
                     style=DIM)
        else:
            said = triage.get("assessment", "nothing to read")
            out.para(f"triage of its output: {said}", indent=2, style=DIM)
    out.line()
    out.para(c["sentence"], style=STRONG)
    shown = c["kind"] not in ("layer", "none")  # for those, the table below is the evidence
    for line in (c.get("evidence") or [])[1:] if shown else []:  # [0]: the run as it is, shown above
        out.hanging("·", line, indent=2, style=DIM)
    rows = [v for v in data["variations"] if v["status"] != "not run" or (v.get("run") or {}).get("error")]
    skipped = len(data["variations"]) - len(rows)
    if rows:
        out.line()
        width = max(len(v["label"]) for v in rows)
        for v in rows:
            run = v.get("run") or {}
            took = f" {run['duration_s']}s" if run.get("duration_s") else ""
            if v["status"] == "not run" and run.get("error"):
                took = f" ({run['error'][:150]})"
            out.spans(("  " + v["label"].ljust(width) + "  ", ""), (v["status"], _STYLE.get(v["status"], "")),
                      (took, DIM))
    meta = data["meta"]
    tail = f"{meta['runs']} runs ({meta['jobs']} at a time) in {meta['duration_s']}s"
    if skipped:
        tail += f"; {skipped} variations not needed (--all runs every one)"
    out.line()
    out.line(tail, DIM)
    if c.get("versions"):
        out.line(f"other torch releases: {c['versions']}", DIM)
    if data.get("report"):
        out.line(f"the report block is in {data['report']}", DIM)
    return out.text()
