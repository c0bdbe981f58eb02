"""The known issues that ship with the doctor: every public module of this package with an ISSUE.

Apart from `kb/__init__.py` so that the index (`kb/_index.py`) can be rebuilt from the modules
without importing the registry that reads it.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import List

from inductor_doctor.core.model import KnownIssue

PACKAGE = "inductor_doctor.kb"


def builtin_issues() -> List[KnownIssue]:
    issues = []
    here = [str(Path(__file__).resolve().parent)]
    for info in sorted(pkgutil.iter_modules(here), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        issue = getattr(module, "ISSUE", None)
        if isinstance(issue, KnownIssue):
            issues.append(issue)
    return issues
