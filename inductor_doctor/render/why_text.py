"""`why`'s answer: the conclusion first (one sentence), then every run once, with its outcome.

Each run is listed once, in the table: the conclusion's evidence (in the JSON) is the same runs in
words, so the text does not repeat them, and a run that failed differently shows its own error under
its row, marked as deciding nothing."""

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
    compared = data.get("compare")
    if compared:
        out.para(f"compared with its eager output ({compared['reference']}), rtol {compared['rtol']:g}, "
                 f"atol {compared['atol']:g}", indent=2, style=DIM)
    out.line()
    out.para(c["sentence"], style=STRONG)
    if c.get("hints"):
        out.line("  Dynamo's hints:", DIM)
        for hint in c["hints"]:
            out.hanging("·", hint, indent=2, style=DIM)
    for note in c.get("notes") or []:
        out.para(note, indent=2)
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
            if v["status"] == "fails differently" and run.get("error_line"):
                out.hanging("·", f"{run['error_line']} (decides nothing)", indent=4, style=DIM)
    meta = data["meta"]
    tail = f"{meta['runs']} runs ({meta['jobs']} at a time) in {meta['duration_s']}s"
    if skipped:
        tail += f"; {skipped} variations not needed (--all runs every one)"
    bisected = c.get("bisect") or {}
    if bisected.get("ran"):
        steps = bisected.get("steps") or []
        other = sum(1 for step in steps if step.get("status") == "fails differently")
        tail += (f"; the compiler bisector: {len(steps)} runs in {bisected.get('duration_s')}s"
                 + (f" ({other} failed differently)" if other else ""))
    out.line()
    out.line(tail, DIM)
    if c.get("versions"):
        out.line(f"other torch releases: {c['versions']}", DIM)
    if data.get("report"):
        out.line(f"the report block is in {data['report']}", DIM)
    return out.text()
