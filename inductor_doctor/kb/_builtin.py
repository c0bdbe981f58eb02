"""The known issues that ship with the doctor: each data file `kb/<name>.toml` with its module's code.

An issue is its data file (`kb/_issue_files.py` reads it) and, where it has code, the module of the
same name beside it, whose `rule`, `advise`, `predict` and `judge_artifact` (an artifact issue's
`check --artifact` hook) the issue gets; a module without a data
file is code that issues share. The one loader here builds the same `KnownIssue` object for the
registry and for a module whose own code needs it (`ISSUE = known_issue(__name__)`, written after
its functions). Apart from `kb/__init__.py` so that the registry's lookups need not import the
vocabulary.
"""

from __future__ import annotations

import importlib
import re
import sys
from functools import reduce
from types import ModuleType
from typing import Any, Dict, List, Optional

from inductor_doctor.core.model import (
    Canary,
    CrossCanary,
    DeviceKind,
    KnownIssue,
    Severity,
    Signature,
    Workaround,
)
from inductor_doctor.kb import _issue_files

PACKAGE = "inductor_doctor.kb"
#: The functions an issue module may give its issue.
HOOKS = ("rule", "advise", "predict", "judge_artifact")

_BUILT: Dict[str, KnownIssue] = {}


def builtin_issues() -> List[KnownIssue]:
    """Every built-in issue, its rule behind the platform table (kb/_platforms.py): on a platform the
    rule was not written for, its row says "not checked" or "cannot arise" instead."""
    from dataclasses import replace

    from inductor_doctor.kb._artifacts import artifact_only
    from inductor_doctor.kb._platforms import gate

    issues = [known_issue(f"{PACKAGE}.{path.stem}") for path in _issue_files.paths()]
    # An artifact's issues are decided against the artifact, on its own rows (check/artifacts.py).
    return [i if artifact_only(i) else replace(i, rule=gate(i.id, i.devices, i.rule)) for i in issues]


def issue_data(module: str) -> Dict[str, Any]:
    """The data file of the issue module named `module` (its `__name__`), as TOML reads it."""
    return _issue_files.read(_issue_files.HERE / f"{module.rpartition('.')[2]}.toml")


def known_issue(module: str) -> KnownIssue:
    """The issue of the module named `module` (its `__name__`): its data file and its code, once."""
    stem = module.rpartition(".")[2]
    if stem in _BUILT:
        return _BUILT[stem]
    code: Optional[ModuleType] = sys.modules.get(module)
    if code is None and (_issue_files.HERE / f"{stem}.py").is_file():
        code = importlib.import_module(module)  # which may build its issue itself, at its end
        if stem in _BUILT:
            return _BUILT[stem]
    issue = build(issue_data(module), code)
    _BUILT[stem] = issue
    return issue


def build(data: Dict[str, Any], code: Optional[ModuleType] = None) -> KnownIssue:
    """A `KnownIssue` from a data file's tables and, if given, the hooks of its module."""
    hooks = {name: getattr(code, name, None) for name in HOOKS}
    canary = data.get("canary")
    return KnownIssue(
        id=data["id"],
        title=data["title"],
        severity=Severity(data["severity"]),
        devices=tuple(DeviceKind(d) for d in data["devices"]),
        upstream=tuple(data["upstream"]),
        summary=data["summary"],
        aliases=tuple(data.get("aliases", ())),
        affected=dict(data.get("affected", {})),
        fixed=dict(data.get("fixed", {})),
        signatures=tuple(_signature(s) for s in data.get("signatures", ())),
        workarounds=tuple(Workaround(**w) for w in data.get("workarounds", ())),
        canary=_canary(canary) if canary else None,
        docs_page=data.get("docs_page"),
        headline=data.get("headline", False),
        load_order=data.get("load_order", 0),
        cross=_cross(data["cross"]) if "cross" in data else None,
        **hooks,
    )


def _signature(table: Dict[str, Any]) -> Signature:
    fields = dict(table)
    for key in ("log_context", "subject"):
        if key in fields:
            fields[key] = tuple(fields[key])
    if "flags" in fields:  # names of `re` flags; none given: the default, IGNORECASE
        fields["flags"] = reduce(lambda a, b: a | b, (re.RegexFlag[f] for f in fields["flags"]), 0)
    return Signature(**fields)


def _cross(table: Dict[str, Any]) -> CrossCanary:
    return CrossCanary(kernels=tuple(table.get("kernels", ())), partial=bool(table.get("partial", False)),
                       backends=tuple(table.get("backends", ("cuda",))), needs=tuple(table.get("needs", ())))


def _canary(table: Dict[str, Any]) -> Canary:
    fields = dict(table)
    fields["devices"] = tuple(DeviceKind(d) for d in fields["devices"])
    for key in ("needs", "affected_exit_signals"):
        if key in fields:
            fields[key] = tuple(fields[key])
    if "timeout_s" in fields:
        fields["timeout_s"] = float(fields["timeout_s"])
    return Canary(**fields)
