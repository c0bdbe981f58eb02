"""Redaction for reports meant to be shared: secrets in environment variables, user names in paths."""

from __future__ import annotations

import getpass
import os
import re
from typing import Any

SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASS$|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)",
    re.IGNORECASE,
)
SECRET_VALUE = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,})"
)
HOME_PATH = re.compile(r"(/home/|/Users/|/u/)([^/\s\"']+)")
#: Only keys shaped like environment variables are judged by their name: a package called
#: `asttokens` or `tokenizers` is not a secret, `HF_TOKEN` is.
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
REDACTED = "<redacted>"


def secret_name(key: object) -> bool:
    return isinstance(key, str) and bool(ENV_NAME.match(key)) and bool(SECRET_NAME.search(key))


def _user_names() -> set:
    names = set()
    for getter in (
        getpass.getuser,
        lambda: os.environ.get("USER", ""),
        lambda: os.environ.get("LOGNAME", ""),
    ):
        try:
            name = getter()
        except Exception:  # no passwd entry in a container
            name = ""
        if name and len(name) > 2 and name not in ("root",):
            names.add(name)
    return names


#: Credentials inside a URL (`https://user:token@host/simple`, a pip index), and bearer tokens.
URL_CREDENTIALS = re.compile(r"(?<=://)[^/\s:@\"']+:[^/\s@\"']+(?=@)")
BEARER = re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/-]{12,}=*")
JWT_OR_PAT = re.compile(
    r"(eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|glpat-[A-Za-z0-9_-]{20,})"
)


def redact_text(text: str, users: set) -> str:
    text = SECRET_VALUE.sub(REDACTED, text)
    text = JWT_OR_PAT.sub(REDACTED, text)
    text = URL_CREDENTIALS.sub(REDACTED, text)
    text = BEARER.sub(REDACTED, text)
    text = HOME_PATH.sub(lambda m: m.group(1) + "<user>", text)
    for name in users:
        text = re.sub(rf"\b{re.escape(name)}\b", "<user>", text)
    return text


def redact_report(data: Any, users: set = None) -> Any:  # type: ignore[assignment]
    """A copy of `data` with secret-looking values and user names replaced."""
    users = _user_names() if users is None else users

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {
                k: (REDACTED if secret_name(k) and isinstance(v, str) else walk(v, k))
                for k, v in value.items()
            }
        if isinstance(value, list):
            if len(value) == 2 and secret_name(value[0]) and isinstance(value[1], str):
                return [value[0], REDACTED]
            return [walk(v) for v in value]
        if isinstance(value, str):
            return redact_text(value, users)
        return value

    return walk(data)
