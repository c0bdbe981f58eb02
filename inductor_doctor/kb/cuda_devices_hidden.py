"""GPUs hidden or misnamed: CUDA_VISIBLE_DEVICES or LOCAL_RANK point at GPUs torch will not see.

The driver lists the GPUs, nvidia-smi shows them, and yet `torch.cuda.is_available()` is False or
`torch.cuda.set_device(local_rank)` fails with "invalid device ordinal": CUDA_VISIBLE_DEVICES is
empty, names an index beyond the GPUs there are (`=7` on a 4-GPU host, a scheduler's global index
on a node), a UUID or MIG id of another machine, or repeats an entry; CUDA stops at the first entry
that names no GPU and hides everything on a repeat. Or a launcher starts more ranks per node than
GPUs are visible. The probe applies CUDA_VISIBLE_DEVICES to the driver's list exactly as CUDA and
torch do (probe/cuda_visible.py), so the verdict is conclusive, and every other CUDA row of the
report is about the GPUs torch will really see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def _count(n: int) -> str:
    return f"{n} GPU{'s' if n != 1 else ''}"


def _entries(var: str) -> int:
    return len([e for e in var.split(",") if e.strip()])


def rule(facts: Facts) -> List[RuleOutcome]:
    cuda = facts.cuda
    driver = cuda.driver_gpus
    if not driver:
        if cuda.driver_version or cuda.nvidia_smi:
            return one(Status.INCONCLUSIVE, "the NVIDIA driver is loaded but its GPU list is unknown "
                       "(nvidia-smi did not answer): cannot tell which GPUs torch will see")
        return one(Status.NOT_APPLICABLE, "no NVIDIA driver here")
    var = cuda.visible_devices
    shown = f"CUDA_VISIBLE_DEVICES={var!r}"
    why = "; ".join(cuda.visibility[:1])
    if cuda.visibility_resolved is False:
        return one(Status.INCONCLUSIVE, f"{shown}: {why or 'could not match its entries'}")
    visible = cuda.visible_count if cuda.visible_count is not None else len(facts.gpus)
    if var is not None and visible == 0:
        return one(Status.AFFECTED, f"{shown} hides all of the driver's {_count(len(driver))}"
                   f"{': ' + why if why else ''}: torch.cuda.is_available() is False, and every CUDA row "
                   "of this report is gone", visible=0, driver=len(driver))
    rank = _int(cuda.local_rank)
    if rank is not None and rank >= visible:
        return one(Status.AFFECTED, f"LOCAL_RANK={rank} but torch sees {_count(visible)}"
                   f"{' (' + shown + ')' if var is not None else ''}: torch.cuda.set_device({rank}) fails "
                   "with 'invalid device ordinal'", local_rank=rank, visible=visible)
    if var is not None and why and visible < _entries(var):
        return one(Status.LIKELY, f"{shown}: {why}, so torch sees {_count(visible)} of the "
                   f"{_entries(var)} it names (a job that expects {_entries(var)} fails)", Basis.STATIC,
                   visible=visible)
    if live_zero(facts):
        return one(Status.INCONCLUSIVE, "the visible GPUs are valid, but the live torch sees none "
                   "(see cuda-driver-too-old and the live probe's notes)")
    which = f" ({shown})" if var is not None else ""
    return one(Status.OK, f"torch sees {_count(visible)} of the driver's {len(driver)}{which}")


def live_zero(facts: Facts) -> bool:
    return facts.cuda.torch_device_count == 0 and bool(facts.cuda.driver_gpus)


def _int(value: object) -> Optional[int]:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None
