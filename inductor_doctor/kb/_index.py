"""The built-in known issues as data, so that `list` and `explain` need not import their modules.

Importing every `kb/<issue>.py` (and what their rules import) costs ~90 ms; the metadata those two
commands show is plain data. `kb/_data/index.json` holds each built-in issue's `to_dict()`; a test
fails when it no longer matches the modules, naming the command that regenerates it:

    python -m inductor_doctor.kb._index --write

Plugins are not in the index (they are another project's): `list` and `explain` still load them
through their entry points.
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

INDEX = Path(__file__).resolve().parent / "_data" / "index.json"
REGENERATE = "python -m inductor_doctor.kb._index --write"


def build() -> List[Dict[str, Any]]:
    """The index as the modules say it now (imports every built-in issue)."""
    from inductor_doctor.kb._builtin import builtin_issues

    return [issue.to_dict() for issue in builtin_issues()]


@lru_cache(maxsize=1)
def load() -> Optional[List[Dict[str, Any]]]:
    """The shipped index; None when it is missing or unreadable (callers then import the modules)."""
    try:
        data = json.loads(INDEX.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, list) else None


def write() -> None:
    INDEX.parent.mkdir(parents=True, exist_ok=True)
    INDEX.write_text(json.dumps(build(), indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {REGENERATE}")
    write()
    print(f"wrote {INDEX}")
