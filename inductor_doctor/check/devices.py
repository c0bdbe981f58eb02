"""Which devices one check covers: all of them, or a share (one torchrun rank's, one library's).

`check` itself knows nothing of torchrun or of the caller: it takes a `DeviceFilter`, keeps the GPUs
it names (their indices stay the node's own, so a fleet view says `node-a/cuda:3`), and checks the
other devices (`cpu`, `toolchain`, `xla`) only where the filter keeps them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, List, Sequence

from inductor_doctor.core.model import DeviceKind, Finding, KnownIssue

_CUDA = re.compile(r"^cuda:(\d+)$")


@dataclass(frozen=True)
class DeviceFilter:
    """`keep(device)` says which devices are ours (`cuda:N` by the node's own index).

    `key` names the share in the canary cache and in reports (e.g. "local rank 1 of 4").
    `owns_a_gpu`: the share expects a GPU of its own (a torchrun rank on a GPU node). Where the
    driver lists GPUs but none of those this process sees is the share's (its CUDA_VISIBLE_DEVICES
    hides them, or its LOCAL_RANK is past them), the share keeps the bare `cuda` device: what it
    sees, `cuda-devices-hidden` among it, is reported on its own column instead of nowhere.
    """

    keep: Callable[[str], bool]
    key: str
    owns_a_gpu: bool = False

    @classmethod
    def only(cls, *devices: str) -> DeviceFilter:
        """Exactly these devices, e.g. `DeviceFilter.only("toolchain", "cuda:0")`."""
        chosen = frozenset(devices)
        return cls(lambda d: d in chosen, "only " + ",".join(sorted(chosen)))

    def keeps(self, device: str) -> bool:
        return self.keep(device)

    def settled(self, facts: Any) -> DeviceFilter:
        """This share on the machine probed: itself, or, for a share that expects a GPU of its own
        and sees none of the driver's, one that also keeps the bare `cuda` device."""
        if not self.owns_a_gpu or not facts.cuda.driver_gpus:
            return self
        if any(self.keep(g.device) for g in facts.cuda.gpus):
            return self
        keep = self.keep
        return replace(self, keep=lambda d: d == "cuda" or keep(d), key=f"{self.key}, none of its GPUs seen",
                       owns_a_gpu=False)

    def facts(self, facts: Any) -> Any:
        """The facts with only our GPUs: a new snapshot, `facts` is left as it was."""
        ours = [g for g in facts.cuda.gpus if self.keep(g.device)]
        return replace(facts, cuda=replace(facts.cuda, gpus=ours))

    def issues(self, issues: Sequence[KnownIssue]) -> List[KnownIssue]:
        """Each issue restricted to the device kinds we keep any of; issues left with none go."""
        out: List[KnownIssue] = []
        for issue in issues:
            kinds = tuple(k for k in issue.devices if self._keeps_kind(k))
            if kinds:
                out.append(issue if kinds == issue.devices else replace(issue, devices=kinds))
        return out

    def _keeps_kind(self, kind: DeviceKind) -> bool:
        if kind is DeviceKind.CUDA:
            return any(self.keep(f"cuda:{i}") for i in range(64))
        return self.keep(kind.value)

    def findings(self, findings: Sequence[Finding]) -> List[Finding]:
        """Our findings: those on a kept device (a bare kind, `cuda` with no GPU, is a device too)."""
        return [f for f in findings if self.keep(f.device)]
