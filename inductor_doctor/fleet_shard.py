"""Which devices one torchrun rank checks, so that a node's ranks split its work instead of repeating it.

With `--nproc-per-node 8` on an 8-GPU node, every rank checking every GPU would run each canary 64
times. Instead local rank `i` of `n` checks the GPUs whose index is `i` modulo `n` (one GPU each
when `n` equals the GPU count, all of them with `--nproc-per-node 1`), and only local rank 0
checks the node-wide devices (`cpu`, `toolchain`, `xla`). GPU indices stay the node's own, so the
fleet view says `node-a/cuda:3`, not eight `cuda:0`s.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, List, Sequence, Tuple

from inductor_doctor.model import DeviceKind, Finding, KnownIssue

Shard = Tuple[int, int]  # (local rank, local world size)
_CUDA = re.compile(r"^cuda:(\d+)$")


def valid(shard: Shard) -> bool:
    rank, size = shard
    return size >= 1 and 0 <= rank < size


def keep_gpu(index: int, shard: Shard) -> bool:
    rank, size = shard
    return index % size == rank


def shard_facts(facts: Any, shard: Shard) -> None:
    """Drop the GPUs another local rank checks (in place: the facts are this run's own)."""
    facts.cuda.gpus = [g for g in facts.cuda.gpus if keep_gpu(g.index, shard)]


def shard_issues(issues: Sequence[KnownIssue], shard: Shard) -> List[KnownIssue]:
    """Local rank 0 checks everything; the others only the GPU side of the GPU issues."""
    if shard[0] == 0:
        return list(issues)
    return [replace(i, devices=(DeviceKind.CUDA,)) for i in issues if DeviceKind.CUDA in i.devices]


def in_shard(device: str, shard: Shard) -> bool:
    m = _CUDA.match(device)
    if m:
        return keep_gpu(int(m.group(1)), shard)
    return shard[0] == 0


def shard_findings(findings: Sequence[Finding], shard: Shard) -> List[Finding]:
    return [f for f in findings if in_shard(f.device, shard)]
