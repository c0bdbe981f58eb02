"""The JSON Schemas of every report, shipped in the package so CI consumers can pin behaviour.

Schemas refer to each other by file name (`finding.schema.json`); `validator(name)` resolves those
references from this folder. The environment's schema is no file: it is generated from the facts'
declarations (`core/declare.py`), so a fact added to `core/facts.py` is in it at once.
Validation needs `jsonschema` (a test dependency, not a runtime one).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Dict, List, Tuple

SCHEMA_DIR = Path(__file__).resolve().parent
BASE_URI = "https://inductor-doctor.invalid/schemas/"
#: Generated, not read from SCHEMA_DIR.
GENERATED = ("environment",)


@cache
def load(name: str) -> Dict[str, Any]:
    if name == "environment":
        return environment()
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


def environment() -> Dict[str, Any]:
    """A report's `environment`: the facts, as declared, and what a report adds beside them
    (`check/environment.py:environment_of`): the host that gathered them, and the const_data_ptr ABI
    verdict the knowledge base reached on the ABI facts."""
    from inductor_doctor.core.declare import json_schema
    from inductor_doctor.core.facts import Facts

    schema = json_schema(Facts, "Toolchain facts gathered by the probe", BASE_URI + "environment.schema.json")
    schema["properties"]["host"] = {"type": "object"}
    abi = schema["$defs"]["AbiInfo"]
    abi["properties"] = {
        "status": {"enum": [None, "affected", "likely", "ok", "not-applicable", "inconclusive"]},
        "reason": {"type": "string"},
        **abi["properties"],
    }
    return schema


def names() -> List[str]:
    """Every schema there is, by name."""
    files = [p.name[: -len(".schema.json")] for p in SCHEMA_DIR.glob("*.schema.json")]
    return sorted(set(files) | set(GENERATED))


def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources: List[Tuple[str, Any]] = [
        (BASE_URI + f"{n}.schema.json", Resource.from_contents(load(n))) for n in names()
    ]
    registry = Registry().with_resources(resources)
    return Draft202012Validator(load(name), registry=registry)


def validate(name: str, document: Any) -> None:
    """Raise jsonschema.ValidationError when `document` does not follow schema `name`."""
    validator(name).validate(document)
