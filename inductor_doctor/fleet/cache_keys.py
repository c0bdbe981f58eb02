"""Will host B hit what host A compiled? The compile-cache key inputs of many reports, compared.

Each `check` report carries its host's key inputs (`environment.cache_key`, probe/cache_key.py): what
enters the FX-graph, AOTAutograd, autotune, Triton and C++ kernel keys besides the program. Two hosts
whose inputs agree compute the same key for the same program, so a shared cache (a directory on NFS
or baked into an image, a Redis remote cache, a `save_cache_artifacts()` blob) written by one is hit
by the other; one input that differs makes every key it enters differ, a miss.

The reports are grouped by their whole key vector, as the fleet view groups identical columns; the
largest group is the reference (a tie goes to the first in the fleet's order), and each input whose
value is not the same everywhere is one line, with the hosts that hold each value as a hostlist: one
line per difference however many hosts. A variable's value is compared by what it does to the key
where the release's code says (`TORCHINDUCTOR_MAX_AUTOTUNE=0` is the default: no difference), and an
input only a live probe knows is never compared against a report that did not run one ("not
compared" is not "the same"). `compare` is called by fleet/document.py; it reads only the reports.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.facts import CACHE_NAMES

#: The order of the fleet view's groups.
GROUPS = ("torch", "triton", "cuda", "gpu", "compiler", "cpu", "settings")
#: Inputs only the live probe knows (a report without a live probe has not read them).
LIVE_PREFIXES = ("triton-env:", "config:")
UNSET = "unset"


def key_facts(report: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    env = report.get("environment")
    facts = env.get("cache_key") if isinstance(env, dict) else None
    return facts if isinstance(facts, dict) and isinstance(facts.get("inputs"), list) else None


def _inputs(facts: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {str(i["id"]): i for i in facts["inputs"] if isinstance(i, dict) and i.get("id")}


def _is_live(input_id: str) -> bool:
    return input_id.startswith(LIVE_PREFIXES)


def vectors(sources: Sequence[Tuple[str, Mapping[str, Any]]]) -> Tuple[
        Dict[str, Dict[str, Tuple[str, str]]], Dict[str, Dict[str, Any]], List[str], Dict[str, List[str]]]:
    """(per source: input id -> (compared value, shown value); the inputs by id, as first seen; the
    sources without key facts; per source: the inputs it could not tell)."""
    facts = {label: key_facts(report) for label, report in sources}
    missing = [label for label, f in facts.items() if f is None]
    known = {label: f for label, f in facts.items() if f is not None}
    catalog: Dict[str, Dict[str, Any]] = {}
    defaults: Dict[str, str] = {}
    for f in known.values():
        for input_id, item in _inputs(f).items():
            catalog.setdefault(input_id, item)
            if item.get("default") and input_id not in defaults:
                defaults[input_id] = str(item["default"])
    out: Dict[str, Dict[str, Tuple[str, str]]] = {}
    unknown: Dict[str, List[str]] = {}
    for label, f in known.items():
        mine = _inputs(f)
        live = bool(f.get("live_read"))
        row: Dict[str, Tuple[str, str]] = {}
        for input_id in catalog:
            item = mine.get(input_id)
            if item is not None and item.get("known", True) is False:
                unknown.setdefault(label, []).append(input_id)
                continue
            if item is None:
                if _is_live(input_id) and not live:
                    unknown.setdefault(label, []).append(input_id)
                    continue
                if not input_id.startswith(("env:",) + LIVE_PREFIXES):
                    continue  # an input this release does not put in its keys: the torch line says so
                row[input_id] = (defaults.get(input_id, UNSET), UNSET)
                continue
            value = item.get("value")
            shown = UNSET if value is None else str(value)
            compared = str(item["effect"]) if item.get("effect") and " = " in str(item["effect"]) else shown
            row[input_id] = (compared, shown)
        out[label] = row
    return out, catalog, missing, unknown


def compare(sources: Sequence[Tuple[str, Mapping[str, Any]]]) -> Dict[str, Any]:
    """The merge document's `cache_keys`: the groups of identical key inputs, the reference group, one
    difference per input that is not the same everywhere, and what could not be compared."""
    rows, catalog, missing, unknown = vectors(sources)
    order = [label for label, _ in sources if label in rows]
    groups: Dict[Tuple[Tuple[str, str], ...], List[str]] = {}
    for label in order:
        signature = tuple(sorted((k, v[0]) for k, v in rows[label].items()))
        groups.setdefault(signature, []).append(label)
    ranked = sorted(groups.values(), key=lambda members: -len(members))
    reference = ranked[0] if ranked else []
    differences = []
    for input_id, item in catalog.items():
        holders: Dict[str, Dict[str, Any]] = {}
        for label in order:
            if input_id not in rows[label]:
                continue
            compared, shown = rows[label][input_id]
            entry = holders.setdefault(compared, {"value": shown, "shown": [], "sources": []})
            if shown not in entry["shown"]:
                entry["shown"].append(shown)
            entry["sources"].append(label)
        if len(holders) < 2:
            continue
        ordered = sorted(holders.items(), key=lambda cv: (not set(cv[1]["sources"]) & set(reference),
                                                          -len(cv[1]["sources"])))
        differences.append({
            "id": input_id,
            "label": item.get("label") or input_id,
            "group": item.get("group") or "settings",
            "caches": list(item.get("caches") or []),
            "cache_names": caches_named(item.get("caches") or []),
            "source": item.get("source") or "",
            "values": [{"value": " or ".join(v["shown"]),
                        "compared": c if c != " or ".join(v["shown"]) else None,
                        "sources": v["sources"]} for c, v in ordered],
        })
    differences.sort(key=lambda d: (GROUPS.index(d["group"]) if d["group"] in GROUPS else len(GROUPS),
                                    d["id"]))
    caches_off = []
    for label, report in sources:
        facts = key_facts(report)
        if facts and facts.get("caches_off"):
            caches_off.append({"source": label, "settings": [str(s) for s in facts["caches_off"]]})
    return {
        "compared": len(order),
        "groups": [{"sources": members} for members in ranked],
        "reference": reference,
        "differences": differences,
        "unknown": [{"source": label, "inputs": ids} for label, ids in unknown.items()],
        "missing": missing,
        "caches_off": caches_off,
    }


def caches_named(caches: Sequence[str]) -> str:
    """`FX graph, AOTAutograd` for a line."""
    return ", ".join(CACHE_NAMES.get(c, c) for c in caches)
