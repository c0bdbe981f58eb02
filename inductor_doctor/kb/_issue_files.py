"""The data file of each built-in known issue, `kb/<id_with_underscores>.toml`, read as plain data.

An issue's metadata (id, title, refs, summary, version ranges, error signatures, workarounds, canary
settings, how a GPU that is not here is judged) is data, written once in its data file beside the
module that holds its code (`rule`, `advise`, `predict`). `list` and `explain` read the data files
alone, with neither the issue modules nor the vocabulary imported, so that they stay fast;
`kb/_builtin.py` builds the `KnownIssue` objects every other command uses from the same files.
TOML's literal strings ('...') take a regex as it is.

The keys a file may hold are the fields of the vocabulary's types (`KnownIssue`, `Signature`,
`Workaround`, `Canary`, `CrossCanary`) that are data; a key outside them is an error naming the file, never a
silently ignored typo (`tests/house/test_kb.py` keeps these lists and the types in step).
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any, Dict, List, Tuple

HERE = Path(__file__).resolve().parent

#: The keys of a data file, each with the type TOML gives it; the first six must be there.
REQUIRED = ("id", "title", "severity", "devices", "upstream", "summary")
ISSUE_KEYS: Dict[str, type] = {
    "id": str, "title": str, "severity": str, "devices": list, "upstream": list, "summary": str,
    "aliases": list, "affected": dict, "fixed": dict, "headline": bool, "docs_page": str,
    "signatures": list, "workarounds": list, "canary": dict, "load_order": int, "cross": dict,
}
SIGNATURE_KEYS: Dict[str, type] = {
    "pattern": str, "strength": str, "note": str, "flags": list, "unless": str, "log_context": list,
    "anchor": str, "anchor_says": str, "anchor_lines": int, "against": str, "against_says": str,
    "ranged": bool, "subject": list, "fact": str, "decided_by": str,
}
WORKAROUND_KEYS: Dict[str, type] = {"text": str, "command": str, "kind": str, "applies": dict}
CANARY_KEYS: Dict[str, type] = {
    "script": str, "devices": list, "needs": list, "timeout_s": float, "env": dict, "deep": bool,
    "affected_exit_signals": list,
}
CROSS_KEYS: Dict[str, type] = {"kernels": list, "partial": bool, "backends": list, "needs": list}
#: Where the error's wordings are raised, for `tools/release_audit.py wordings`, which reads them from each
#: release into `core/_data/wordings.json`: data of the tool's, not of the doctor's (no `KnownIssue` field).
WORDING_SOURCE_KEYS: Dict[str, type] = {
    "package": str, "files": list, "anchor": str, "note": str, "fill": dict, "sdist": bool,
}
TOOL_KEYS: Dict[str, type] = {"wording_sources": list}
#: The keys a table of each kind must have.
TABLE_REQUIRED = {"signatures": ("pattern",), "workarounds": ("text",), "canary": ("script", "devices"),
                  "wording_sources": ("package", "files", "anchor")}


class IssueFileError(ValueError):
    """A built-in issue's data file that cannot be read or says something no issue can: the
    doctor's own defect, named with the file and the key."""


def paths(where: Path = HERE) -> List[Path]:
    """The data files of the built-in issues, by name."""
    return sorted(p for p in where.glob("*.toml") if not p.name.startswith("_"))


def module_stem(issue_id: str) -> str:
    return issue_id.replace("-", "_")


@cache
def read(path: Path) -> Dict[str, Any]:
    """One data file, its keys checked; read once per process."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise IssueFileError(f"{path}: {exc}") from exc
    _check(path, "", data, {**ISSUE_KEYS, **TOOL_KEYS}, REQUIRED)
    tables = {"signatures": SIGNATURE_KEYS, "workarounds": WORKAROUND_KEYS,
              "wording_sources": WORDING_SOURCE_KEYS}
    for key, keys in tables.items():
        for n, table in enumerate(data.get(key, ())):
            _check(path, f"{key}[{n}].", table, keys, TABLE_REQUIRED[key])
    if "canary" in data:
        _check(path, "canary.", data["canary"], CANARY_KEYS, TABLE_REQUIRED["canary"])
    if "cross" in data:
        _check(path, "cross.", data["cross"], CROSS_KEYS, ())
    if module_stem(data["id"]) != path.stem:
        raise IssueFileError(f"{path}: the issue {data['id']!r} belongs in {module_stem(data['id'])}.toml")
    return data


def _check(path: Path, where: str, table: Any, keys: Dict[str, type], required: Tuple[str, ...]) -> None:
    if not isinstance(table, dict):
        raise IssueFileError(f"{path}: {where.rstrip('.') or 'the file'} is not a table")
    for key, value in table.items():
        want = keys.get(key)
        if want is None:
            raise IssueFileError(f"{path}: unknown key {where}{key} (known: {', '.join(keys)})")
        if not isinstance(value, want) and not (want is float and isinstance(value, int)):
            raise IssueFileError(f"{path}: {where}{key} is a {type(value).__name__}, not a {want.__name__}")
    for key in required:
        if key not in table:
            raise IssueFileError(f"{path}: {where}{key} is missing")


def entry(data: Dict[str, Any]) -> Dict[str, Any]:
    """A data file as `KnownIssue.to_dict()` says the issue (what `list` and `explain` show), with
    the vocabulary's defaults filled in; keys sorted at every level, as the JSON output has always had
    them."""
    canary = data.get("canary")
    out = {
        "id": data["id"],
        "title": data["title"],
        "severity": data["severity"],
        "devices": list(data["devices"]),
        "upstream": list(data["upstream"]),
        "aliases": list(data.get("aliases", ())),
        "summary": data["summary"],
        "affected": dict(sorted(data.get("affected", {}).items())),
        "fixed": dict(sorted(data.get("fixed", {}).items())),
        "signatures": [s["pattern"] for s in data.get("signatures", ())],
        "workarounds": [{"applies": dict(sorted(w.get("applies", {}).items())), "command": w.get("command"),
                         "kind": w.get("kind", "other"), "text": w["text"]}
                        for w in data.get("workarounds", ())],
        "canary": canary["script"] if canary else None,
        "source": "builtin",
        "docs_page": data.get("docs_page"),
    }
    return dict(sorted(out.items()))


def entries(where: Path = HERE) -> List[Dict[str, Any]]:
    """Every built-in issue as data, by id."""
    return sorted((entry(read(p)) for p in paths(where)), key=lambda e: e["id"])
