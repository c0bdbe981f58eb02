"""What a fact is, said once, beside its field in `core/facts.py`.

A fact's field carries a `Declared` in its metadata (`fact(...)`): which probe produces it, what it
costs to learn, whether it belongs in a canary's key, the label `merge` compares it under, whether
its key is always in the environment JSON, JSON-Schema words its type cannot say, and how preflight
may read it without running anything. Everything that needs to know what a fact is reads this
declaration instead of keeping a list of its own: the canary cache's volatile set
(`volatile_names`), the environment JSON Schema (`json_schema`), the merge fields (`merge_fields`)
and preflight's fingerprint (`quick_readers`). A field without a declaration inherits its section's
probe and cost, is part of the key, and is in the schema by its type.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import typing
from dataclasses import MISSING, dataclass
from functools import cache
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

#: What learning a fact costs: reading files and asking binaries (`static`), one `import torch` in
#: the target (`live`), a compile (`compile`).
COSTS = ("static", "live", "compile")
_KEY = "inductor_doctor.fact"


@dataclass(frozen=True)
class Declared:
    """One fact's declaration; `None` means "as its section says"."""

    #: The probe step that produces it (the name of a probe module's `STEP`, `probe.plan()`);
    #: `probe.gather` builds each section of the facts from its step's answer.
    probe: Optional[str] = None
    cost: Optional[str] = None  # one of COSTS
    #: Part of a canary's cache key. False: it changes from run to run without the environment
    #: changing (durations, notes, free memory, what a cache holds now).
    key: bool = True
    #: The label `merge` compares it under across reports (`{}` is the section's label), and where
    #: it goes among the others (default: its place in the declaration).
    merge: Optional[str] = None
    order: Optional[float] = None
    required: bool = False  # its key is always in the environment JSON (the schema requires it)
    schema: Optional[Mapping[str, Any]] = None  # JSON-Schema words its type cannot say (enum, minimum)
    #: How preflight's fingerprint reads what this fact depends on without running anything:
    #: "package:<import name>", "file:<path>", "compiler", "python_h", "env".
    quick: Optional[str] = None

    def __post_init__(self) -> None:
        if self.cost is not None and self.cost not in COSTS:
            raise ValueError(f"cost {self.cost!r} is not one of {COSTS}")


def fact(default: Any = MISSING, *, default_factory: Any = MISSING, **declared: Any) -> Any:
    """A dataclass field with its declaration: `fact(None, merge="torch", quick="package:torch")`."""
    meta = {_KEY: Declared(**declared)}
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def declared(f: dataclasses.Field) -> Declared:  # type: ignore[type-arg]
    return f.metadata.get(_KEY) or Declared()


@dataclass(frozen=True)
class Entry:
    """One declared field where it sits in the facts: its path, type and declaration (with what the
    sections above it say filled in)."""

    path: Tuple[str, ...]
    field: dataclasses.Field  # type: ignore[type-arg]
    hint: Any  # as written (text under PEP 563)
    declared: Declared
    probe: Optional[str]
    cost: str


def _inner(hint: Any) -> Any:
    """The dataclass a hint holds (`Optional[X]`, `List[X]`), or None."""
    if dataclasses.is_dataclass(hint):
        return hint
    for arg in typing.get_args(hint):
        found = _inner(arg)
        if found is not None:
            return found
    return None


_NAME = re.compile(r"[A-Za-z_]\w*")


def _section(cls: Any, f: dataclasses.Field) -> Any:  # type: ignore[type-arg]
    """The dataclass field `f` of `cls` holds, or None. An annotation written as text (PEP 563) is
    read by its names in `cls`'s module rather than evaluated: `typing.get_type_hints` compiles
    every annotation, which every command that loads the canary cache would pay for."""
    if not isinstance(f.type, str):
        return _inner(f.type)
    space = vars(sys.modules[cls.__module__])
    for name in _NAME.findall(f.type):
        found = space.get(name)
        if dataclasses.is_dataclass(found):
            return found
    return None


def walk(cls: Any, path: Tuple[str, ...] = (), probe: Optional[str] = None,
         cost: str = "static") -> Iterator[Entry]:
    """Every field of `cls` and of the sections it holds, depth first, in declaration order."""
    for f in dataclasses.fields(cls):
        d = declared(f)
        entry = Entry(path + (f.name,), f, f.type, d, d.probe or probe, d.cost or cost)
        yield entry
        inner = _section(cls, f)
        if inner is not None:
            yield from walk(inner, entry.path, entry.probe, entry.cost)


@cache
def volatile_names(cls: Any) -> frozenset:
    """The field names never part of a canary's key. A name is volatile wherever it occurs (the
    key strips it from every level of the facts), so every field of that name must say so."""
    out = set()
    kept = set()
    for e in walk(cls):
        (kept if e.declared.key else out).add(e.field.name)
    clash = out & kept
    if clash:
        raise ValueError(f"declared both in and out of a canary's key: {sorted(clash)}")
    return frozenset(out)


def merge_fields(cls: Any, root: str = "environment") -> List[Tuple[str, str]]:
    """(label, dotted path in a report) of every fact declared with a merge label, in merge order."""
    found: List[Tuple[Tuple[float, ...], str, str]] = []

    def visit(c: Any, path: Tuple[str, ...], label: str, rank: Tuple[float, ...]) -> None:
        for i, f in enumerate(dataclasses.fields(c)):
            d = declared(f)
            here = rank + (d.order if d.order is not None else float(i),)
            name = d.merge.format(label) if d.merge else label
            inner = _section(c, f)
            if inner is not None:
                visit(inner, path + (f.name,), name, here)
            elif d.merge:
                found.append((here, name, ".".join((root,) + path + (f.name,))))

    visit(cls, (), "", ())
    return [(label, path) for _, label, path in sorted(found, key=lambda t: t[0])]


def quick_readers(cls: Any) -> List[str]:
    """The fingerprint's readers, each once, in declaration order."""
    return list(dict.fromkeys(e.declared.quick for e in walk(cls) if e.declared.quick))


# --- the JSON Schema --------------------------------------------------------------------------------

_SCALARS = {str: "string", bool: "boolean", int: "integer", float: "number"}


def json_schema(cls: Any, title: str, schema_id: str) -> Dict[str, Any]:
    """The JSON Schema of `cls.to_dict()` (dataclasses.asdict), generated from the types and the
    declarations: every section a `$defs` entry named after its class."""
    defs: Dict[str, Any] = {}
    top = _object(cls, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "title": title,
        **top,
        "$defs": dict(sorted(defs.items())),
    }


def _object(cls: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: Dict[str, Any] = {}
    required: List[str] = []
    for f in dataclasses.fields(cls):
        d = declared(f)
        props[f.name] = {**_type(hints[f.name], defs), **dict(d.schema or {})}
        if d.required or (f.default is MISSING and f.default_factory is MISSING):
            required.append(f.name)
    out: Dict[str, Any] = {"type": "object"}
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
        out["description"] = " ".join(cls.__doc__.split())
    if required:
        out["required"] = required
    out["properties"] = props
    if getattr(cls, "CLOSED", False):  # a section whose JSON holds its declared keys and no others
        out["additionalProperties"] = False
    return out


def _type(hint: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    if hint is Any:
        return {}
    if dataclasses.is_dataclass(hint):
        name = hint.__name__
        if name not in defs:
            defs[name] = {}  # a placeholder first: a section may hold itself
            defs[name] = _object(hint, defs)
        return {"$ref": f"#/$defs/{name}"}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            t = _type(inner[0], defs)
            if set(t) == {"type"}:
                return {"type": [t["type"], "null"]}
            return {"anyOf": [t, {"type": "null"}]}
        return {"anyOf": [_type(a, defs) for a in args]}
    if origin in (list, List):
        return {"type": "array", "items": _type(args[0], defs) if args else {}}
    if origin in (dict, Dict):
        return {"type": "object", "additionalProperties": _type(args[1], defs) if args else {}}
    raise TypeError(f"no JSON Schema for the type {hint!r}: declare facts with plain types")
