"""Facts are declared once (core/declare.py): what reads the declaration sees every fact, and a
declaration that contradicts itself is refused."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import List, Optional

import pytest

from inductor_doctor.check.cache import VOLATILE, stable_facts
from inductor_doctor.core.declare import fact, json_schema, merge_fields, volatile_names, walk
from inductor_doctor.core.facts import Facts, GPUInfo, PythonInfo
from inductor_doctor.fleet.document import FIELDS
from inductor_doctor.schemas import load, validate


def test_the_canary_key_leaves_out_what_the_facts_declare_volatile():
    assert VOLATILE == {"duration_s", "notes", "live", "cached", "cache_scan", "autotune", "free_bytes",
                        "free_inodes", "memory_free_mib", "memory_used_mib"}
    facts = Facts(python=PythonInfo(executable="/p", version="3.11.7", notes=["n"]))
    facts.cuda.gpus = [GPUInfo(index=0, name="H100", memory_free_mib=5, memory_mib=80)]
    stable = stable_facts(facts.to_dict())
    assert "notes" not in stable["python"] and "duration_s" not in stable
    assert stable["cuda"]["gpus"] == [{k: v for k, v in dataclasses.asdict(facts.cuda.gpus[0]).items()
                                      if k not in ("memory_free_mib", "memory_used_mib")}]


def test_every_fact_is_in_the_environment_schema():
    schema = load("environment")
    for entry in walk(Facts):
        if len(entry.path) == 1:
            assert entry.path[0] in schema["properties"], entry.path
    for section in schema["$defs"].values():
        assert section["type"] == "object" and section["properties"]
    validate("environment", {**Facts(python=PythonInfo("/p", "3.11")).to_dict(), "host": {}})


def test_merge_compares_the_declared_facts_in_their_order():
    paths = [p for _, p in FIELDS]
    assert paths[:2] == ["tool_version", "kb_version"]
    assert [p for _, p in merge_fields(Facts)] == paths[2:2 + len(merge_fields(Facts))]
    assert ("torch_xla", "environment.xla.version") in FIELDS
    assert paths.index("environment.xla.version") < paths.index("environment.cuda.driver_version")
    assert paths.index("environment.cuda.cudnn_version") < paths.index("environment.cuda.ptxas_version")


@dataclass
class _Inner:
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class _Clashing:
    inner: _Inner = fact(default_factory=_Inner)
    notes: Optional[str] = None  # kept in the key here, left out of it in _Inner


@dataclass
class _Odd:
    when: Optional[complex] = None


def test_a_name_both_in_and_out_of_the_key_is_refused():
    with pytest.raises(ValueError, match="notes"):
        volatile_names(_Clashing)


def test_a_type_the_schema_cannot_say_is_refused():
    with pytest.raises(TypeError, match="plain types"):
        json_schema(_Odd, "odd", "odd")
