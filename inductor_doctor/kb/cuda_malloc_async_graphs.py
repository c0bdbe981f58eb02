"""The cudaMallocAsync allocator with Inductor's CUDA graphs: "does not yet support checkPoolLiveAllocations".

`PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync` (and `PYTORCH_ALLOC_CONF`, which torch 2.9 and later
read too) makes torch allocate through CUDA's stream-ordered allocator. Its c10 implementation
refuses `checkPoolLiveAllocations`, which Inductor's CUDA graph trees call to check their private
pool (`check_memory_pool`, under `triton.slow_path_cudagraph_asserts`, True by default), so
`torch.compile(mode="reduce-overhead")` and "max-autotune" fail once they record a graph. Which
releases refuse it, call it, and default the check on is read from each release (libc10_cuda.so,
cudagraph_trees.py, config.py: core/source_history.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core import source_history as history
from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import not_cuda_torch

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

VARIABLES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")


def async_backend(env: dict, readable: Tuple[str, ...] = VARIABLES) -> Optional[str]:
    """`NAME=value` of the variable that selects cudaMallocAsync, or None."""
    for name in readable:
        value = env.get(name, "")
        for part in value.replace(";", ",").split(","):
            key, _, val = part.partition(":")
            if key.strip() == "backend" and val.strip() == "cudaMallocAsync":
                return f"{name}={value}"
    return None


def rule(facts: Facts) -> List[RuleOutcome]:
    not_cuda = not_cuda_torch(facts, "has no CUDA allocator")
    if not_cuda:
        return not_cuda
    t = facts.torch
    assert t is not None
    release = history.release_of(t.version)
    known = history.malloc_async(release)
    readable = tuple(known.get("alloc_conf_env") or VARIABLES) if known else VARIABLES
    setting = async_backend(facts.env, readable)
    if setting is None:
        ignored = async_backend(facts.env, tuple(v for v in VARIABLES if v not in readable))
        tail = f" ({ignored} is set, but {torch_label(facts)} does not read that variable)" if ignored else ""
        return one(Status.NOT_APPLICABLE, f"torch's own caching allocator is in use: no "
                   f"backend:cudaMallocAsync in {' or '.join(readable)}{tail}")
    if known is None:
        return one(Status.LIKELY, f"{setting} is set; {torch_label(facts)} is newer than the releases read, "
                   "whose cudaMallocAsync allocator refuses checkPoolLiveAllocations, which CUDA graph trees "
                   "call", Basis.VERSION)
    if not (known.get("refuses") and known.get("cudagraph_trees_check")):
        return one(Status.OK, f"{setting} is set, and {torch_label(facts)}'s CUDA graph trees do not call "
                   "what its cudaMallocAsync allocator refuses", Basis.VERSION)
    default = known.get("slow_path_cudagraph_asserts")
    return one(Status.LIKELY, f"{setting} is set, and torch {release}'s cudaMallocAsync allocator refuses "
               "checkPoolLiveAllocations, which its CUDA graph trees call (triton.slow_path_cudagraph_asserts"
               f"{' is on by default' if default else ''}): torch.compile with mode='reduce-overhead' or "
               "'max-autotune' fails once it records a CUDA graph", Basis.VERSION, setting=setting)
