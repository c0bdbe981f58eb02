"""`fix --dockerfile`: the verified workarounds as `ENV` (and the `RUN mkdir -p` they need) lines.

A Dockerfile has no shell state between lines, so an environment workaround becomes `ENV` with the
values bash gave it here (a `$HOME` already expanded: this machine's values). Every line is valid
Dockerfile syntax: Docker reads a `#` only at the start of a line as a comment (mid-line it is part
of the value), and `$` and `"` inside a quoted `ENV` value are escaped so that Docker keeps them. A
Dockerfile cannot unset a variable (an empty `ENV` is set, to nothing), so an `unset` is a comment
that says which line to delete. Advice (installs, upgrades) is printed as commented `RUN` lines:
unverified, never run by pasting the output.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from inductor_doctor.render.fix_shell import head

_MKDIR = re.compile(r"mkdir\s+-p\s+(\S.*?)\s*(?:&&|;|$)")


def render(data: Mapping[str, Any], **_: Any) -> str:
    out, items = head(data)
    for item in items:
        if not (item["verified"] and item["env"]):
            continue
        out.append(f"# {item['issue']}: {' '.join(item['how'].split())}")
        for match in _MKDIR.finditer(item["command"] or ""):
            out.append(f"RUN mkdir -p {match.group(1)}")
        for name, value in sorted(item["env"].items()):
            if value is None:
                out.append(f"# unset {name}: a Dockerfile cannot unset a variable; delete the ENV or ARG "
                           f"line that sets {name}, or the base image's")
            elif "\n" in value or "\r" in value:
                out.append(f"# {name} takes a value of several lines, which ENV cannot hold; "
                           "set it in the RUN that needs it")
            else:
                out.append(f"ENV {name}={quoted(value)}")
    advice = [i for i in items if not (i["verified"] and i["env"])]
    if advice:
        out.append("# not verified here (advice; uncomment what applies):")
        for item in advice:
            text = " ".join((item["command"] or item["text"]).split())
            out.append(f"# RUN {text}" if item["command"] else f"# {item['issue']}: {text}")
    return "\n".join(out) + "\n"


def quoted(value: str) -> str:
    """A double-quoted `ENV` value Docker reads back as `value`: backslash, quote and `$` escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'
