"""How a rank is bound to its GPU, said the same way on every rank set up alike.

`CUDA_VISIBLE_DEVICES` and `LOCAL_RANK` differ between ranks by design, so the fleet view leaves the
raw variables out of its differences. What must not differ is the rule behind them: every rank sees
all the node's GPUs and takes `cuda:$LOCAL_RANK`, or every rank sees only its own
(`CUDA_VISIBLE_DEVICES=$LOCAL_RANK`). A rank bound another way (its GPUs hidden, a list of its own, a
wrapper that rewrote `LOCAL_RANK`) is then one difference, "GPU binding", naming that rank.

`LOCAL_RANK` is compared with the local rank torchrun gave the process: where every node runs the same
number of ranks, torchrun numbers them `RANK = GROUP_RANK × LOCAL_WORLD_SIZE + LOCAL_RANK`
(torch/distributed/elastic/agent/server/api.py, `_assign_worker_ranks`), so a rewritten `LOCAL_RANK`
shows.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional


def launcher_local_rank(rank: int, group_rank: Optional[int], local_world_size: int,
                        group_world_size: Optional[int], world_size: int) -> Optional[int]:
    """The local rank torchrun's numbering implies, where every node has the same number of ranks."""
    if group_rank is None or group_world_size is None or local_world_size < 1:
        return None
    if world_size != group_world_size * local_world_size:
        return None
    local = rank - group_rank * local_world_size
    return local if 0 <= local < local_world_size else None


def _get(data: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(part)
    return data


def describe(report: Mapping[str, Any]) -> str:
    """The rank's binding in words that do not name the rank: equal on ranks set up alike."""
    var = _get(report, "environment", "cuda", "visible_devices")
    local = _get(report, "environment", "cuda", "local_rank")
    if var is None:
        words = "every GPU visible"
    elif not str(var).strip():
        words = "CUDA_VISIBLE_DEVICES='' (no GPU)"
    elif local is not None and str(var).strip() == str(local).strip():
        words = "CUDA_VISIBLE_DEVICES=$LOCAL_RANK"
    else:
        words = f"CUDA_VISIBLE_DEVICES={var!r}"
    expected = _get(report, "meta", "distributed", "launcher_local_rank")
    if isinstance(expected, int) and local is not None and str(local).strip() != str(expected):
        words += f", LOCAL_RANK={local} (torchrun's local rank {expected})"
    return words
