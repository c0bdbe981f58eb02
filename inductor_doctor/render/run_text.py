"""`run`'s words after a failed command, for stderr: the match and how sure, the checks run here
now, the workaround; or, for an unknown failure, that nothing matched and the `why` to run next.

Every line starts after the program's own output and says it is the doctor's
(`inductor-doctor:`), so a reader of a long log can find where the program stopped talking.
"""

from __future__ import annotations

import sys
from typing import Any, List, Mapping

from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import (
    BAD,
    COMMAND,
    DIM,
    GOOD,
    STATUS,
    STRONG,
    WARN,
    terminal_width,
    use_color,
)


def ended(data: Mapping[str, Any]) -> str:
    """How the command ended, as a shell would say it."""
    if data.get("signal"):
        return f"was killed by signal {data['signal']}"
    return f"exited with status {data['exit_code']}"


def render(data: Mapping[str, Any], **_: Any) -> str:
    out = Writer(terminal_width(), use_color(sys.stderr))
    triage = data["triage"]
    out.line()
    out.spans(("inductor-doctor: ", STRONG), (f"the command {ended(data)}", ""))
    if not triage.get("matched"):
        out.para(f"{triage['assessment']} (read {data['output']['kept_bytes']:,} bytes of its stderr).",
                 indent=2)
        out.para("To find which part of the stack fails (caches, compile workers, compiler, your "
                 "settings, the backend layer), re-run it under controlled variations:", indent=2)
        out.line("    $ " + data["why"], COMMAND)
        _report(out, data)
        return out.text()
    style = BAD if triage["confidence"] == "exact" else WARN
    out.spans(("  ", ""), (triage["assessment"], style), (f" ({triage['confidence']} match): ", ""),
              (triage.get("title") or "", ""))
    for reason in triage.get("because") or []:
        out.para("only partly: " + reason, indent=4, style=DIM)
    for ev in triage.get("evidence") or []:
        text = " ".join(ev["text"])[:200]
        out.para(f"line {ev['line']}: {text}", indent=4, style=DIM)
    _checks(out, data.get("check") or {})
    _workarounds(out, triage.get("workarounds") or [])
    if triage.get("others"):
        out.para("also matched: " + ", ".join(triage["others"]), indent=2, style=DIM)
    out.line(f"  more: {triage['explain']}", DIM)
    _report(out, data)
    return out.text()


def _checks(out: Writer, check: Mapping[str, Any]) -> None:
    if check.get("error"):
        out.para(f"checked here: could not ({check['error']})", indent=2, style=WARN)
        return
    if not check.get("ran"):
        return
    for r in check.get("results") or []:
        status = r["status"]
        basis = "canary" if r.get("basis") == "canary" else r.get("basis", "")
        out.spans(("  checked here now: ", ""), (f"{r['id']} on {r['device']}: ", STRONG),
                  (status, STATUS.get(status, "")), (f" ({basis})", DIM))
        if r.get("reason"):
            out.para(r["reason"][:400], indent=4, style=DIM)


def _workarounds(out: Writer, workarounds: List[Mapping[str, Any]]) -> None:
    for i, w in enumerate(workarounds):
        out.hanging("-", ("workaround: " if i == 0 else "") + w["text"], indent=2,
                    style=GOOD if i == 0 else "")
        if w.get("command"):
            out.line("      $ " + w["command"], COMMAND)


def _report(out: Writer, data: Mapping[str, Any]) -> None:
    if data.get("report"):
        out.line(f"  the report block (with this triage) is in {data['report']}", DIM)
