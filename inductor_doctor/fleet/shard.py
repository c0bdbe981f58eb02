"""Which devices one torchrun rank checks, so that a node's ranks split its work instead of repeating it.

With `--nproc-per-node 8` on an 8-GPU node, every rank checking every GPU would run each canary 64
times. Instead local rank `i` of `n` checks the GPUs whose index is `i` modulo `n` (one GPU each
when `n` equals the GPU count, all of them with `--nproc-per-node 1`), and only local rank 0
checks the node-wide devices (`cpu`, `toolchain`, `xla`). A rank that sees none of its GPUs (its
own CUDA_VISIBLE_DEVICES hides them, or there are fewer GPUs than local ranks) checks what it does
see, on its own `cuda` column: a rank that cannot see its GPU is the finding, not a silent gap.
"""

from __future__ import annotations

import re
from typing import Tuple

from inductor_doctor.check.devices import DeviceFilter

Shard = Tuple[int, int]  # (local rank, local world size)
_CUDA = re.compile(r"^cuda:(\d+)$")


def valid(shard: Shard) -> bool:
    rank, size = shard
    return size >= 1 and 0 <= rank < size


def keep_gpu(index: int, shard: Shard) -> bool:
    rank, size = shard
    return index % size == rank


def device_filter(shard: Shard) -> DeviceFilter:
    rank, size = shard

    def keep(device: str) -> bool:
        m = _CUDA.match(device)
        return keep_gpu(int(m.group(1)), shard) if m else rank == 0

    return DeviceFilter(keep, key=f"local rank {rank} of {size}", owns_a_gpu=True)
