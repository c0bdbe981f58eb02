"""The fleet view's compile-cache lines: who will miss what whom compiled, one line per input that differs.

Read from the merge document's `cache_keys` (fleet/cache_keys.py) only; the text and Markdown views
of `merge` and `check --distributed` both print these lines.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from inductor_doctor.core.hostlist import pieces

#: Host names in one line before "and N more".
MAX_PARTS = 6

#: Keys that only a kernel Triton compiles is looked up by. An input that enters these and not the
#: FX graph's leaves an FX graph hit standing, and the kernels the graph's entry bundles may then be
#: loaded without Triton's key: on torch 2.11 and 4 x H100, another ptxas was such a pair's only
#: difference and the second host compiled nothing, while TRITON_DEFAULT_FP_FUSION=0 made the same
#: hit compile its kernels again (docs/gpu-verification.md, fifth and sixth passes). So the line says
#: where a miss is certain and that the rest cannot be predicted from the reports.
KERNEL_ONLY = frozenset({"triton", "autotune"})
BUNDLED = "torch may load those without their key: not predictable from the reports"


def _hosts(sources: Sequence[str], limit: int = MAX_PARTS) -> str:
    parts = pieces(sources)
    if len(parts) <= limit:
        return ", ".join(parts)
    return ", ".join(parts[:limit]) + f" and {len(parts) - limit} more"


def _short(label: str) -> str:
    return label.split(" (")[0]


def cache_lines(doc: Mapping[str, Any]) -> List[str]:
    """The section's lines, its header first; empty where no report carries key inputs."""
    keys = doc.get("cache_keys") or {}
    compared = int(keys.get("compared") or 0)
    if compared == 0:
        return []
    reference = list(keys.get("reference") or [])
    diffs = list(keys.get("differences") or [])
    others = [s for g in keys.get("groups") or [] for s in g["sources"] if s not in reference]
    out: List[str] = []
    if not diffs:
        if compared > 1:
            out.append(f"Compile caches: the same key inputs in all {compared} reports: what one compiles, "
                       "the others can load from a shared cache")
    else:
        ref = _hosts(reference) if len(reference) <= 3 else f"the other {len(reference)}"
        if all(set(d.get("caches") or []) <= KERNEL_ONLY for d in diffs):
            head = (f"Compile caches: {_hosts(others)} will miss {ref}'s Triton kernels where they compile "
                    f"them, but not always where an FX graph entry bundles them ({BUNDLED})")
        else:
            head = f"Compile caches: {_hosts(others)} will miss what {ref} compiled"
        if len(diffs) == 1 and len(diffs[0]["values"]) == 2 and len(reference) + len(others) == 2:
            d = diffs[0]
            mine = next(v for v in d["values"] if not set(v["sources"]) & set(reference))
            theirs = next(v for v in d["values"] if set(v["sources"]) & set(reference))
            out.append(f"{head}: {_short(d['label'])} differs ({mine['value']} vs {theirs['value']}; "
                       f"{d['cache_names']} keys)")
        else:
            out.append(head + ":")
            out += ["  " + _difference(d, reference) for d in diffs]
    for entry in keys.get("caches_off") or []:
        out.append(f"  {entry['source']}: " + "; ".join(entry["settings"]))
    unknown = keys.get("unknown") or []
    if unknown:
        by_inputs: dict = {}
        for u in unknown:
            names = ", ".join(_short(i.split(":", 1)[-1]) for i in u["inputs"])
            by_inputs.setdefault(names, []).append(u["source"])
        for inputs, sources in by_inputs.items():
            whose = "its report has" if len(sources) == 1 else "their reports have"
            out.append(f"  not compared: {inputs} on {_hosts(sources)} ({whose} no live probe's answer)")
    missing = keys.get("missing") or []
    if missing:
        out.append(f"  no key inputs in the reports of {_hosts(missing)} (an older doctor, or no torch)")
    return out


def _difference(d: Mapping[str, Any], reference: Sequence[str]) -> str:
    values = list(d["values"])
    shown = []
    for n, v in enumerate(values):
        many = len(v["sources"]) > 3 and n == 0 and bool(set(v["sources"]) & set(reference))
        where = f"the other {len(v['sources'])}" if many else _hosts(v["sources"])
        shown.append((many, f"{v['value']} on {where}"))
    # the few named first, the many counted last
    text = "; ".join(t for _, t in sorted(shown, key=lambda s: s[0]))
    return f"{_short(d['label'])}: {text} ({d['cache_names']} keys)"
