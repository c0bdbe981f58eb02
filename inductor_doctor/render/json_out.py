"""JSON output: stdout holds the document alone, so it must be exactly one valid JSON value."""

from __future__ import annotations

import json
from typing import Any


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str, ensure_ascii=False) + "\n"
