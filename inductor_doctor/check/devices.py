"""Which devices one check covers: all of them, or a share (one torchrun rank's, say).

`check` itself knows nothing of torchrun: it takes a `DeviceFilter`, keeps the GPUs it names (their
indices stay the node's own, so a fleet view says `node-a/cuda:3`), and checks the node-wide devices
(`cpu`, `toolchain`, `xla`) only when told to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, List, Sequence

from inductor_doctor.model import DeviceKind, Finding, KnownIssue

_CUDA = re.compile(r"^cuda:(\d+)$")


@dataclass(frozen=True)
class DeviceFilter:
    """`keep_gpu(index)` says which GPUs are ours; `node_wide` whether cpu/toolchain/xla are.

    `key` names the share in the result cache and in reports (e.g. "rank 1 of 4").
    """

    keep_gpu: Callable[[int], bool]
    node_wide: bool
    key: str

    def keeps(self, device: str) -> bool:
        m = _CUDA.match(device)
        return self.keep_gpu(int(m.group(1))) if m else self.node_wide

    def facts(self, facts: Any) -> None:
        """Drop the GPUs that are not ours (in place: the facts are this run's own)."""
        facts.cuda.gpus = [g for g in facts.cuda.gpus if self.keep_gpu(g.index)]

    def issues(self, issues: Sequence[KnownIssue]) -> List[KnownIssue]:
        """Without the node-wide devices, only the GPU side of the GPU issues is left to check."""
        if self.node_wide:
            return list(issues)
        return [replace(i, devices=(DeviceKind.CUDA,)) for i in issues if DeviceKind.CUDA in i.devices]

    def findings(self, findings: Sequence[Finding]) -> List[Finding]:
        return [f for f in findings if self.keeps(f.device)]
