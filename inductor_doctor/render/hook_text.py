"""`inductor-doctor hook`: what was done to which interpreter, and how to undo it."""

from __future__ import annotations

from typing import Any, Mapping

from inductor_doctor.render.plain import Writer
from inductor_doctor.render.style import COMMAND, DIM, terminal_width, use_color

_SAID = {
    "installed": "the exception hook is on for every run of {python}",
    "removed": "the exception hook is off for {python} (its .pth is removed)",
    "present": "the exception hook is on for {python}",
    "absent": "the exception hook is not installed for {python}",
}


def render(data: Mapping[str, Any], **_: Any) -> str:
    out = Writer(terminal_width(), use_color())
    out.para(_SAID[data["action"]].format(python=data["python"]))
    out.line(f"  {data['pth']}", DIM)
    if data["action"] in ("installed", "present"):
        out.line("  off for one run: INDUCTOR_DOCTOR_HOOK=0; off for good:", DIM)
        out.line(f"    $ inductor-doctor hook --remove-pth --python {data['python']}", COMMAND)
    else:
        out.line("  on for every run of it:", DIM)
        out.line(f"    $ inductor-doctor hook --install-pth --python {data['python']}", COMMAND)
    return out.text()
