"""`fix --dockerfile`: the verified workarounds as `ENV` (and the `RUN mkdir -p` they need) lines.

A Dockerfile has no shell state between lines, so an environment workaround becomes `ENV` with the
values bash gave it here (a `$HOME` already expanded: this machine's values), and an `unset` becomes
an empty `ENV` with a comment. Advice (installs, upgrades) is printed as commented `RUN` lines:
unverified, never run by pasting the output.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from inductor_doctor.render.fix_shell import head

_MKDIR = re.compile(r"mkdir\s+-p\s+(\S.*?)\s*(?:&&|;|$)")


def render(data: Mapping[str, Any], **_: Any) -> str:
    out, items = head(data)
    for item in items:
        if not (item["verified"] and item["env"]):
            continue
        out.append(f"# {item['issue']}: {item['how']}")
        for match in _MKDIR.finditer(item["command"] or ""):
            out.append(f"RUN mkdir -p {match.group(1)}")
        for name, value in sorted(item["env"].items()):
            if value is None:
                out.append(f'ENV {name}=""  # unset: remove the line that sets it instead, if you can')
            else:
                out.append(f"ENV {name}={json.dumps(value)}")
    advice = [i for i in items if not (i["verified"] and i["env"])]
    if advice:
        out.append("# not verified here (advice; uncomment what applies):")
        for item in advice:
            text = " ".join((item["command"] or item["text"]).split())
            out.append(f"# RUN {text}" if item["command"] else f"# {item['issue']}: {text}")
    return "\n".join(out) + "\n"
