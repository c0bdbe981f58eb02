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

from inductor_doctor.core.model import (
    Basis,
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
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


ISSUE = KnownIssue(
    id="cuda-devices-hidden",
    title="GPUs hidden or misnamed: CUDA_VISIBLE_DEVICES or LOCAL_RANK name GPUs torch will not see",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "pytorch/examples#115",
        "thuml/Autoformer#25",
        "meta-llama/llama#946",
        "ACEsuit/mace#435",
    ),
    aliases=("cuda-visible-devices", "invalid-device-ordinal", "no-cuda-gpus-available"),
    summary=(
        "nvidia-smi lists the GPUs, but torch sees none or fewer: CUDA_VISIBLE_DEVICES is empty, names "
        "an index beyond the GPUs there are, a UUID or MIG id that is not on this machine, or repeats an "
        "entry (CUDA stops reading at the first entry that names no GPU, and hides every GPU on a "
        "repeat). Or LOCAL_RANK is beyond the visible count. torch.cuda.is_available() is False ('No "
        "CUDA GPUs are available', 'Found no NVIDIA driver on your system' in some versions), or "
        "torch.cuda.set_device(LOCAL_RANK) fails with 'CUDA error: invalid device ordinal'."
    ),
    signatures=(
        Signature(r"(?:CUDA error|cuda runtime error \(\d+\)) ?: invalid device ordinal",
                  note="cudaErrorInvalidDevice: a GPU index torch does not see"),
        Signature(r"No CUDA GPUs are available", strength="partial",
                  note="torch.cuda lazy init with no visible GPU; also a host or container without any"),
        Signature(r"CUDA_VISIBLE_DEVICES", strength="partial"),
        Signature(r"device \d+ is not visible \(CUDA_VISIBLE_DEVICES=",
                  note="torch.cuda._get_nvml_device_index"),
    ),
    workarounds=(
        Workaround("See the GPUs and their UUIDs the driver lists, then name existing ones", "nvidia-smi -L",
                   "other"),
        Workaround("Unset it to see every GPU (or list indices below the GPU count, each once)",
                   "unset CUDA_VISIBLE_DEVICES", "env"),
        Workaround("Under torchrun, start at most as many processes per node as GPUs are visible: "
                   "`--nproc-per-node gpu` starts one per visible GPU", None, "flag"),
        Workaround("Number GPUs as nvidia-smi does when CUDA_VISIBLE_DEVICES uses indices on a host with "
                   "different GPU models", "export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env"),
    ),
    rule=rule,
)
