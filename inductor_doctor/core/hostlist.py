"""Host names as cluster tools print them: `node[0000-1999]`, `gpu[01-04,07],login1`; and a fleet's
`host/device` columns with them: `node[0000-0089,0091-1999]/cuda:0-7`.

A fleet of 2,000 hosts named one by one is a page of names nobody reads; Slurm, pdsh and ClusterShell
print the same set as a prefix and ranges of its numbers, keeping the numbers' zero padding. Names
that share a prefix, a suffix and a number width form one bracket; any other name stands as it is.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

_NUMBERED = re.compile(r"^(.*?)(\d+)(\D*)$")
_CUDA = re.compile(r"cuda:\d+")


def _ranges(numbers: List[int], width: int) -> str:
    """[0, 1, 2, 5] -> "0000-0002,0005" (padded to `width`)."""
    parts: List[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        first, last = f"{numbers[i]:0{width}d}", f"{numbers[j]:0{width}d}"
        parts.append(first if i == j else f"{first}-{last}")
        i = j + 1
    return ",".join(parts)


def compress(names: Iterable[str]) -> str:
    """The hostlist of `names` (duplicates dropped), in the order each prefix first appears."""
    return ",".join(pieces(names))


def pieces(names: Iterable[str]) -> List[str]:
    """The hostlist's top-level items: `["node[0000-1999]", "login1"]`."""
    groups: Dict[Tuple[str, str, int], List[int]] = {}
    plain: Dict[str, None] = {}
    order: List[Tuple[str, object]] = []
    for name in names:
        m = _NUMBERED.match(name)
        if m is None:
            if name not in plain:
                plain[name] = None
                order.append(("plain", name))
            continue
        key = (m.group(1), m.group(3), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(("group", key))
        groups[key].append(int(m.group(2)))
    out: List[str] = []
    for kind, what in order:
        if kind == "plain":
            out.append(str(what))
            continue
        prefix, suffix, width = what  # type: ignore[misc]
        numbers = sorted(set(groups[what]))  # type: ignore[index]
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{width}d}{suffix}")
        else:
            out.append(f"{prefix}[{_ranges(numbers, width)}]{suffix}")
    return out


def count_phrase(names: Iterable[str], limit: int = 60) -> str:
    """`node[0000-1999]`, or `2000 hosts` where even the hostlist would be longer than `limit`."""
    unique = list(dict.fromkeys(names))
    text = compress(unique)
    return text if len(text) <= limit else f"{len(unique)} hosts"


def index_ranges(indices: Iterable[int]) -> str:
    """[0,1,2,3,5] -> "0-3,5" (device indices: no padding)."""
    return _ranges(sorted(set(indices)), 1)


def column_parts(columns: Sequence[Mapping[str, Any]]) -> List[str]:
    """`host/device` columns (dicts with `source` and `device`) compacted: each source's GPUs as
    ranges, then the sources with the same devices as a hostlist:
    `["node[0000-0089,0091-1999]/cuda:0-7", "node0090/cuda:1-7", "node-b/cpu"]`."""
    by_source: Dict[str, List[str]] = {}
    for c in columns:
        by_source.setdefault(str(c["source"]), []).append(str(c["device"]))
    by_devices: Dict[str, List[str]] = {}
    for source, devices in by_source.items():
        cuda = [int(d.split(":")[1]) for d in devices if _CUDA.fullmatch(d)]
        others = [d for d in devices if not _CUDA.fullmatch(d)]
        for part in ([f"cuda:{index_ranges(cuda)}"] if cuda else []) + others:
            by_devices.setdefault(part, []).append(source)
    return [f"{item}/{part}" if part else item
            for part, sources in by_devices.items() for item in pieces(sources)]
