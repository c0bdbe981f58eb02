"""Why `pip install` failed, in one line, from pip's own final error.

pip says a lot on its way to failing: a retry warning per attempt when the index cannot be
reached (each several hundred characters, with "NewConnectionError" in it), the resolver's
explanation on stdout, and a closing help link. The first line that mentions an error is a retry
warning, which told nobody anything (`plan --suggest --verify` printed it cut mid-word). What a user
needs is pip's conclusion and what caused it:

* pip's final `ERROR:` (not the `ResolutionImpossible: for help visit ...` trailer): "No matching
  distribution found for torch==2.13.0 (from versions: none)", "Cannot install torch==2.15.0
  because these package versions have conflicting dependencies";
* what caused it, where pip says it: the index it could not reach and how ("its index
  http://127.0.0.1:9/simple could not be reached ([Errno 111] Connection refused)"), a constraint
  the user (or this machine's pip configuration) set: "The user requested (constraint)
  torch<=2.14.1" in the resolver's explanation.

Shared by `plan --suggest --verify` and `why --versions`, the two that install into a scratch venv.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional

#: pip's retry warnings that mean the index was never reached (no DNS, no route, a proxy refusing).
UNREACHABLE = ("NewConnectionError", "ConnectTimeoutError", "ProxyError", "Failed to establish",
               "Name or service not known", "Temporary failure in name resolution", "NameResolutionError")
#: The longest reason said; a longer one is cut between words.
MAX_REASON = 400

_BROKEN_BY = re.compile(r"after connection broken by '(?P<kind>\w+)\((?P<args>.*)\)': (?P<path>\S+)\s*$")
_OBJECT = re.compile(r"^'?<[^>]*>:\s*")
_ERRNO = re.compile(r"(\[Errno -?\d+\][^'\")]*)")
_INDEXES = re.compile(r"^Looking in indexes:\s*(?P<urls>.+)$")
_VERSIONS = re.compile(r"Could not find a version that satisfies the requirement (?P<req>.+?) "
                       r"\(from versions: (?P<versions>[^)]*)\)")


def pip_error(result: Any) -> str:
    """pip's reason in one line (`result` has `stdout`, `stderr` and `why()`, a `ProcResult`): its
    final `ERROR:` with what caused it, the index it could not reach, the constraint it could not
    satisfy; else `result.why()` (a timeout, a pip that did not run)."""
    text = f"{result.stderr or ''}\n{result.stdout or ''}"
    lines = [ln.strip() for ln in text.splitlines()]
    errors = [ln[len("ERROR:"):].strip() for ln in lines if ln.startswith("ERROR:")
              and not ln.startswith("ERROR: ResolutionImpossible")]
    if not errors:
        return cut(result.why())
    said = _final(errors)
    constraints = [ln.split("(constraint)", 1)[1].strip() for ln in lines if "requested (constraint)" in ln]
    if constraints:
        said += f" (a pip constraint: {', '.join(dict.fromkeys(constraints))})"
    unreachable = [ln for ln in lines
                   if ln.startswith("WARNING: Retrying") and any(w in ln for w in UNREACHABLE)]
    if unreachable:
        where = _index(lines)
        how = _how(unreachable[-1])
        said = (f"its index{' ' + where if where else ''} could not be reached{f' ({how})' if how else ''}, "
                f"and pip then says: {said}")
    return cut(said)


def _final(errors: List[str]) -> str:
    """pip's conclusion: its last ERROR, with the versions it saw when that was "no matching
    distribution" (said in the ERROR before it)."""
    last = errors[-1].rstrip(".")
    if last.startswith("No matching distribution found"):
        for earlier in reversed(errors[:-1]):
            m = _VERSIONS.search(earlier)
            if m:
                return f"{last} (from versions: {m.group('versions') or 'none'})"
    return last


def _index(lines: List[str]) -> Optional[str]:
    """The index pip looked in, as it says it ("Looking in indexes: ...")."""
    for ln in lines:
        m = _INDEXES.match(ln)
        if m:
            return m.group("urls").strip()
    return None


def _how(warning: str) -> Optional[str]:
    """What a retry warning says of the connection: `[Errno 111] Connection refused`, or the
    error's own words when it has no errno."""
    m = _BROKEN_BY.search(warning)
    if not m:
        return None
    args = _OBJECT.sub("", m.group("args").strip())
    via = "a proxy it was told to use: " if m.group("kind") == "ProxyError" else ""
    errno = _ERRNO.search(args)
    if errno:
        return via + errno.group(1).strip()
    words = args.strip("'\" ")
    return (via + words) if words else None


def cut(text: str, limit: int = MAX_REASON) -> str:
    """`text` on one line, at most `limit` characters, cut between words (never mid-word)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(",;: ") + "…"


_CONSTRAINT_SETTING = re.compile(r"^(?P<where>[:\w.-]*?)\.?constraint\s*=\s*'?(?P<value>[^']*)'?\s*$")


def constraint_settings(config_list: str) -> List[str]:
    """Where pip's configuration sets a constraint, from `pip config list`'s lines
    (`global.constraint='/etc/xdg/pip/constraints.txt'`, `:env:.constraint='...'` for PIP_CONSTRAINT)."""
    out = []
    for line in config_list.splitlines():
        m = _CONSTRAINT_SETTING.match(line.strip())
        if m and m.group("value"):
            where = "PIP_CONSTRAINT" if m.group("where").startswith(":env:") else "pip's configuration"
            out.append(f"{m.group('value')} ({where})")
    return out
