"""Which of the driver's GPUs torch will see, numbered as torch numbers them.

nvidia-smi lists every GPU the driver knows, in PCI bus order. A CUDA process sees only those that
`CUDA_VISIBLE_DEVICES` names, in the order it names them, renumbered from 0: with
`CUDA_VISIBLE_DEVICES=2,0`, `cuda:0` is nvidia-smi's GPU 2. The rules must speak of the devices
torch will have, so `CudaInfo.gpus` becomes that list and the driver's whole list moves to
`CudaInfo.driver_gpus`.

The parsing mirrors `torch.cuda._parse_visible_devices` and `_transform_uuid_to_ordinals`
(torch/cuda/__init__.py), which mirror CUDA's own (CUDA Programming Guide, "CUDA Environment
Variables"): an empty value hides every GPU; integers are read like `strtoul` (`1gpu` is 1); the
first entry that names no GPU ends the list; a repeated entry hides every GPU; `GPU-` entries may
be unique prefixes of a UUID; `MIG-` entries name MIG instances, resolved through `nvidia-smi -L`.

Order: nvidia-smi's index is PCI bus order, which CUDA follows with `CUDA_DEVICE_ORDER=PCI_BUS_ID`.
CUDA's default, FASTEST_FIRST, puts the fastest GPU first; among identical GPUs that is the same
order, and the probe assumes it. Where the GPUs differ and the order is not PCI_BUS_ID, integer
entries and `cuda:N` may follow another order: a note says so, and the live probe, which asks
torch, corrects names and capabilities by index.
"""

from __future__ import annotations

import copy
import re
from typing import Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import CudaInfo, GPUInfo
from inductor_doctor.probe._proc import c_locale_env, run

SMI_TIMEOUT_S = 15.0
_MIG_LINE = re.compile(r"^\s*MIG\s+(\S+)\s+Device\s+(\d+):\s*\(UUID:\s*(MIG-[^)\s]+)\)")
_GPU_LINE = re.compile(r"^GPU\s+(\d+):.*\(UUID:\s*(GPU-[^)\s]+)\)")


def strtoul(s: str) -> int:
    """`torch.cuda._parse_visible_devices._strtoul`: the leading integer, or -1."""
    if not s:
        return -1
    idx = 0
    for idx, c in enumerate(s):
        if not (c.isdigit() or (idx == 0 and c in "+-")):
            break
        if idx + 1 == len(s):
            idx += 1
    try:
        return int(s[:idx]) if idx > 0 else -1
    except ValueError:  # a lone "+" or "-"
        return -1


def parse(var: str) -> Tuple[str, List[object], Optional[str]]:
    """`(kind, entries, why_cut)` as torch parses CUDA_VISIBLE_DEVICES.

    kind: "index" (ints), "uuid" ("GPU-..." strings) or "mig". `why_cut` says why parsing stopped
    early or emptied the list (a repeated entry), None when every entry was taken.
    """
    for prefix, kind in (("GPU-", "uuid"), ("MIG-", "mig")):
        if var.startswith(prefix):
            out: List[object] = []
            for elem in var.split(","):
                if elem in out:
                    return kind, [], f"{elem!r} is repeated, which hides every GPU"
                if not elem.startswith(prefix):
                    return kind, out, f"{elem!r} is not a {prefix} id: CUDA stops reading there"
                out.append(elem)
            return kind, out, None
    ints: List[object] = []
    for elem in var.split(","):
        x = strtoul(elem.strip())
        if x in ints:
            return "index", [], f"{elem.strip()!r} is repeated, which hides every GPU"
        if x < 0:
            what = "an empty entry" if not elem.strip() else repr(elem.strip())
            return "index", ints, f"{what} is not a GPU index: CUDA stops reading there"
        ints.append(x)
    return "index", ints, None


def uuid_ordinal(candidate: str, uuids: List[Optional[str]]) -> Tuple[int, str]:
    """`_transform_uuid_to_ordinals.uuid_to_ordinal`: `(index, "")` or `(-1, why)`."""
    best = -1
    for idx, uuid in enumerate(uuids):
        if uuid and uuid.startswith(candidate):
            if best != -1:
                return -1, "matches more than one GPU"
            best = idx
    return (best, "") if best >= 0 else (-1, "matches no GPU the driver lists")


def mig_listing(smi: str) -> Optional[Dict[str, Tuple[int, str]]]:
    """`nvidia-smi -L`: MIG UUID -> (parent GPU index, profile); None when it did not answer."""
    res = run([smi, "-L"], timeout_s=SMI_TIMEOUT_S, env=c_locale_env())
    if not res.ok:
        return None
    return parse_mig_listing(res.stdout)


def parse_mig_listing(text: str) -> Dict[str, Tuple[int, str]]:
    out: Dict[str, Tuple[int, str]] = {}
    parent = -1
    for line in text.splitlines():
        g = _GPU_LINE.match(line)
        if g:
            parent = int(g.group(1))
            continue
        m = _MIG_LINE.match(line)
        if m and parent >= 0:
            out[m.group(3)] = (parent, m.group(1))
    return out


def _renumber(gpu: GPUInfo, index: int, mig: Optional[str] = None, profile: str = "") -> GPUInfo:
    seen = copy.copy(gpu)
    seen.index = index
    seen.driver_index = gpu.index
    if mig:
        seen.mig = mig
        seen.name = f"{gpu.name} MIG {profile}".strip()
        seen.memory_mib = None  # a slice of the GPU's memory; the live probe knows how much
        seen.sm_count = None
    return seen


def resolve(driver: List[GPUInfo], var: Optional[str],
            migs: Optional[Dict[str, Tuple[int, str]]] = None) -> Tuple[List[GPUInfo], List[str], bool]:
    """`(visible GPUs renumbered, notes, resolved)` for CUDA_VISIBLE_DEVICES=`var` (None: unset)."""
    if var is None:
        return [_renumber(g, i) for i, g in enumerate(driver)], [], True
    if var.strip() == "":
        return [], ["CUDA_VISIBLE_DEVICES is set but empty: CUDA hides every GPU"], True
    kind, entries, why = parse(var)
    notes: List[str] = []
    visible: List[GPUInfo] = []
    resolved = True
    if kind == "index":
        for x in entries:
            assert isinstance(x, int)
            if x >= len(driver):
                why = (f"{x} is not a GPU index here (the driver lists {len(driver)} GPU"
                       f"{'' if len(driver) == 1 else 's'}: 0-{len(driver) - 1})" if driver else
                       f"{x} is not a GPU index here (the driver lists none)")
                why += ": CUDA stops reading there"
                break
            visible.append(_renumber(driver[x], len(visible)))
    elif kind == "uuid":
        uuids = [g.uuid for g in driver]
        if driver and not any(uuids):
            why_not = "the driver's GPU UUIDs are unknown: cannot match CUDA_VISIBLE_DEVICES"
            return list(driver), [why_not], False
        taken: List[int] = []
        for x in entries:
            assert isinstance(x, str)
            idx, bad = uuid_ordinal(x, uuids)
            if idx < 0:
                why = f"{x!r} {bad}: CUDA stops reading there"
                break
            if idx in taken:
                why = f"{x!r} names the same GPU twice, which hides every GPU"
                visible = []
                break
            taken.append(idx)
            visible.append(_renumber(driver[idx], len(visible)))
    else:  # MIG instances
        if migs is None:
            return list(driver), ["CUDA_VISIBLE_DEVICES names MIG instances and `nvidia-smi -L` did not "
                                  "answer: which GPUs torch sees is unknown"], False
        by_index = {g.index: g for g in driver}
        for x in entries:
            assert isinstance(x, str)
            hit = migs.get(x)
            if hit is None or hit[0] not in by_index:
                why = f"{x!r} matches no MIG instance `nvidia-smi -L` lists: CUDA stops reading there"
                break
            visible.append(_renumber(by_index[hit[0]], len(visible), mig=x, profile=hit[1]))
    if why:
        notes.append(why)
    return visible, notes, resolved


def order_note(driver: List[GPUInfo], order: Optional[str]) -> Optional[str]:
    """Why integer entries and cuda:N may not follow nvidia-smi's order here, if they may not."""
    if order == "PCI_BUS_ID" or len({(g.name, g.sm) for g in driver}) <= 1:
        return None
    return ("these GPUs differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers them fastest "
            "first, which may differ from nvidia-smi's order (set CUDA_DEVICE_ORDER=PCI_BUS_ID)")


def apply(info: CudaInfo, env: Mapping[str, str]) -> None:
    """Set `info.gpus` to what torch will see; the driver's list goes to `info.driver_gpus`."""
    var = env.get("CUDA_VISIBLE_DEVICES")
    info.visible_devices = var
    info.device_order = env.get("CUDA_DEVICE_ORDER")
    info.local_rank = env.get("LOCAL_RANK")
    driver = list(info.gpus)
    info.driver_gpus = driver
    migs = None
    if var is not None and var.startswith("MIG-") and info.nvidia_smi:
        migs = mig_listing(info.nvidia_smi)
    visible, notes, resolved = resolve(driver, var, migs)
    note = order_note(driver, info.device_order)
    if note:
        notes.append(note)
    info.gpus = visible
    info.visible_count = len(visible) if resolved else None
    info.visibility = notes
    info.visibility_resolved = resolved
    if var is not None and driver:
        shown = ", ".join(f"cuda:{g.index} = GPU {g.driver_index}" for g in visible) or "none"
        info.notes.append(f"CUDA_VISIBLE_DEVICES={var!r}: torch sees {shown}")
