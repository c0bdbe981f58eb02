"""The JSON Schemas of every report, shipped in the package so CI consumers can pin behaviour.

Schemas refer to each other by file name (`finding.schema.json`); `validator(name)` resolves those
references from this folder. Validation needs `jsonschema` (a test dependency, not a runtime one).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Dict

SCHEMA_DIR = Path(__file__).resolve().parent
BASE_URI = "https://inductor-doctor.invalid/schemas/"


@cache
def load(name: str) -> Dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = []
    for path in SCHEMA_DIR.glob("*.schema.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        resources.append((BASE_URI + path.name, Resource.from_contents(doc)))
    registry = Registry().with_resources(resources)
    return Draft202012Validator(load(name), registry=registry)


def validate(name: str, document: Any) -> None:
    """Raise jsonschema.ValidationError when `document` does not follow schema `name`."""
    validator(name).validate(document)
