"""What an environment workaround does, found by letting a shell run it.

Workarounds are written for a user's shell (`export TRITON_CACHE_DIR="${TMPDIR:-/tmp}/triton-$(id
-u)"`), so the only faithful reading is bash's own: the command runs in `bash -c` with nothing else,
followed by `env -0`, and the variables it set, changed or removed are the workaround. A command
that does more than set variables (an install, a `mkdir`) is not an environment workaround here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Dict, Optional

#: Only these shapes are evaluated: `export A=... [B=...]`, `unset A [B]`, joined by `&&` or `;`,
#: plus a `mkdir -p` of a directory the exports then name (cache-dir-noexec's `$HOME/tmp`).
_STEP = re.compile(r"^\s*(export\s+\S.*|unset\s+[A-Za-z_][A-Za-z0-9_ ]*|mkdir\s+-p\s+\S.*)\s*$")
TIMEOUT_S = 10.0
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_effect(command: str) -> Optional[Dict[str, Optional[str]]]:
    """The variables `command` sets (name -> value) or unsets (name -> None); None when it is not
    an environment workaround or the shell could not run it."""
    steps = re.split(r"\s*(?:&&|;)\s*", command.strip())
    if not steps or not all(_STEP.match(s) for s in steps):
        return None
    if not any(s.lstrip().startswith(("export", "unset")) for s in steps):
        return None
    bash = shutil.which("bash")
    if bash is None:
        return None
    try:
        proc = subprocess.run([bash, "-c", command + "\nenv -0"], capture_output=True, timeout=TIMEOUT_S,
                              env=dict(os.environ), check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    after: Dict[str, str] = {}
    for item in proc.stdout.split(b"\0"):
        name, sep, value = item.decode("utf-8", errors="replace").partition("=")
        if sep:
            after[name] = value
    # Only what the command names: bash drops variables of its own accord (PS1 in a shell that is
    # not interactive, as an activated venv exports it), and those are no part of the workaround.
    named = set(_NAME.findall(" ".join(s for s in steps if not s.lstrip().startswith("mkdir"))))
    before = {k: v for k, v in os.environ.items() if k in named}
    after = {k: v for k, v in after.items() if k in named}
    effect: Dict[str, Optional[str]] = {k: v for k, v in after.items() if before.get(k) != v}
    effect.update({k: None for k in before if k not in after})
    return effect


def shell_quote(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"
