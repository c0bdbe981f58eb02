"""Accepted findings: `--suppress ID` and `[[suppress]]` entries with a reason and an expiry date.

A suppression never hides a finding: it stays in the report, marked with the reason, and only stops
counting towards the exit code. An expired suppression is not honoured, and the report says so.
"""

from __future__ import annotations

import datetime as _dt
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.core.model import Finding, UsageError

CONFIG_NAMES = ("inductor-doctor.toml", ".inductor-doctor.toml")


@dataclass(frozen=True)
class Suppression:
    id: str
    reason: str
    until: Optional[_dt.date] = None
    device: Optional[str] = None
    origin: str = "command line"

    def expired(self, today: _dt.date) -> bool:
        return self.until is not None and today > self.until


def _toml_load(path: Path) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {path} is not valid TOML: {exc}") from None


def find_config(start: Optional[Path] = None) -> Optional[Path]:
    """inductor-doctor.toml, or a pyproject.toml with [tool.inductor-doctor], in the cwd or above."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        for name in CONFIG_NAMES:
            if (d / name).is_file():
                return d / name
        py = d / "pyproject.toml"
        if py.is_file():
            try:
                if b"[tool.inductor-doctor" in py.read_bytes():
                    return py
            except OSError:
                pass
        if (d / ".git").exists():
            break
    return None


def _parse_entries(path: Path, data: Dict[str, Any]) -> List[Suppression]:
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("inductor-doctor", {})
    entries = data.get("suppress", [])
    if not isinstance(entries, list):
        raise UsageError(f"{path}: `suppress` must be an array of tables ([[suppress]])")
    out: List[Suppression] = []
    for n, entry in enumerate(entries, 1):
        where = f"{path}: suppress #{n}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise UsageError(f"{where}: needs an `id` string")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"{where} ({entry['id']}): needs a `reason`, so the next reader knows why")
        until = entry.get("until")
        if isinstance(until, str):
            try:
                until = _dt.date.fromisoformat(until)
            except ValueError:
                raise UsageError(f"{where}: `until` must be a date like 2027-01-31") from None
        elif isinstance(until, _dt.datetime):
            until = until.date()
        elif until is not None and not isinstance(until, _dt.date):
            raise UsageError(f"{where}: `until` must be a date like 2027-01-31")
        device = entry.get("device")
        if device is not None and not isinstance(device, str):
            raise UsageError(f"{where}: `device` must be a string such as cuda:0")
        out.append(Suppression(entry["id"], reason.strip(), until, device, str(path)))
    return out


def load_suppressions(config: Optional[Path], ids: Sequence[str]) -> List[Suppression]:
    path = config if config is not None else find_config()
    found: List[Suppression] = []
    if path is not None:
        if config is not None and not path.is_file():
            raise UsageError(f"--config {path}: no such file")
        found = _parse_entries(path, _toml_load(path))
    found += [Suppression(i, "suppressed with --suppress") for i in ids]
    from inductor_doctor.kb import registry

    reg = registry()
    resolved = []
    for s in found:
        issue = reg.find(s.id)
        if issue is None:
            raise UsageError(
                f"{s.origin}: unknown issue {s.id!r} in a suppression; see `inductor-doctor list`"
            )
        resolved.append(replace(s, id=issue.id))
    return resolved


def apply_suppressions(
    findings: Sequence[Finding], suppressions: Sequence[Suppression], today: Optional[_dt.date] = None
) -> Tuple[List[Finding], List[str]]:
    today = today or _dt.date.today()
    notes: List[str] = []
    for s in suppressions:
        if s.expired(today):
            notes.append(f"suppression of {s.id} ({s.origin}) expired on {s.until}: not honoured")
    out = []
    for f in findings:
        match = next(
            (
                s
                for s in suppressions
                if s.id == f.id and (s.device is None or s.device == f.device) and not s.expired(today)
            ),
            None,
        )
        if match is not None:
            until = f" until {match.until}" if match.until else ""
            f = replace(f, suppressed=f"{match.reason}{until}")
        out.append(f)
    return out, notes
