"""What each torch and Triton release's own sources define, release by release, shipped as data.

`_data/source_history.json` is written by `tools/release_audit.py sources` from one Linux x86_64
wheel per release (tools/audit/source_history.py): the config knobs of `torch._inductor.config`,
`torch._dynamo.config` and `torch._functorch.config` with their aliases and the `TORCH*` variables
those files read; the CompilerBisector's state files; whether libc10_cuda's cudaMallocAsync refuses
`checkPoolLiveAllocations` and the CUDA graph trees call it; the names Triton's public modules
define. Each name maps to runs of releases, `[[first, last], ...]`, oldest first. Read on first use.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import InvalidVersion, Version

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "source_history.json")
Runs = List[List[str]]


@lru_cache(maxsize=1)
def data() -> Dict[str, Any]:
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)


def _key(v: str) -> Version:
    return Version(v)


def release_of(version: Optional[str]) -> Optional[str]:
    """`2.5.1+cu124` -> `2.5.1`; a nightly or a dev build -> its release; None when unparsable."""
    if not version:
        return None
    try:
        return ".".join(str(p) for p in Version(version).release[:3])
    except InvalidVersion:
        return None


def covers(runs: Runs, version: str, newest: str) -> Optional[bool]:
    """Whether a release is inside the runs; None for a release newer than `newest`, the last one the
    history read."""
    v = _key(version)
    if any(_key(a) <= v <= _key(b) for a, b in runs):
        return True
    return None if v > _key(newest) else False


def knob(module: str, name: str) -> Optional[Runs]:
    """The releases whose `module` (e.g. `torch._dynamo.config`) defines `name` (`recompile_limit`,
    `triton.cudagraphs`); None for a module the history does not cover."""
    table = data()["torch_config"].get(module)
    if table is None:
        return None
    return table.get(name, [])


def alias(module: str, name: str) -> Optional[Tuple[str, Runs]]:
    """(the knob `module.name` is an alias of, the releases where it is), or None."""
    entry = data()["torch_config_aliases"].get(f"{module}.{name}")
    return (entry["of"], entry["releases"]) if entry else None


def aliases_of(target: str) -> List[Tuple[str, Runs]]:
    """The names that are aliases of `target` (`torch._dynamo.config.recompile_limit`)."""
    return [(name, e["releases"]) for name, e in data()["torch_config_aliases"].items() if e["of"] == target]


def env_var(name: str) -> Optional[Runs]:
    """The releases whose config files read the variable `name` (None: never read there)."""
    return data()["torch_config_env"].get(name)


def torch_releases() -> List[str]:
    return list(data()["torch_releases"])


def triton_releases() -> List[str]:
    return list(data()["triton_releases"])


def triton_name(module: str, name: str) -> Optional[Tuple[Runs, Runs]]:
    """(the releases where Triton's `module` exists, those where it defines `name`); None for a module
    the history does not follow."""
    entry = data()["triton_names"].get(module)
    if entry is None:
        return None
    return entry["module"], entry["names"].get(name, [])


def triton_module(module: str) -> Runs:
    """The releases whose wheel has the Python module `module` (`triton.ops`)."""
    return data()["triton_modules"].get(module, [])


def bisector(release: Optional[str]) -> Optional[Dict[str, Any]]:
    """How a torch release's CompilerBisector keeps its state (`subdir`, `status_file`); None when the
    release has none (or is not in the history)."""
    if not release:
        return None
    return data()["torch_bisector"].get(release)


def malloc_async(release: Optional[str]) -> Optional[Dict[str, Any]]:
    """For a torch release: whether its cudaMallocAsync allocator `refuses` checkPoolLiveAllocations,
    whether its CUDA graph trees call it (`cudagraph_trees_check`), the default of
    `triton.slow_path_cudagraph_asserts`, and the allocator variables its libc10 reads."""
    if not release:
        return None
    return data()["torch_malloc_async_pool_check"].get(release)


def first(runs: Runs) -> Optional[str]:
    return runs[0][0] if runs else None


def last(runs: Runs) -> Optional[str]:
    return runs[-1][1] if runs else None


def after(releases: List[str], version: str) -> Optional[str]:
    """The release that follows `version` in `releases`."""
    try:
        i = releases.index(version)
    except ValueError:
        return None
    return releases[i + 1] if i + 1 < len(releases) else None


def said(runs: Runs, releases: List[str], what: str) -> str:
    """`torch 2.7.0 to 2.15.0` / `torch 2.3.0 to 3.2.0, removed in 3.3.0` for the runs of a name."""
    if not runs:
        return f"no {what} release defines it"
    parts = []
    for a, b in runs:
        gone = after(releases, b)
        span = a if a == b else f"{a} to {b}"
        parts.append(f"{span}" + (f" (gone in {gone})" if gone else ""))
    return f"{what} " + ", ".join(parts)
