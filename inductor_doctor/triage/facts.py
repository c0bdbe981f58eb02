"""Facts a log states that turn a shared symptom into a diagnosis.

`no kernel image is available for execution on the device` is printed by every CUDA program built
for other GPUs; in a log that also states the torch it ran (`PyTorch version: 2.5.0+cu121`) and the
GPU's capability (`CUDA capability sm_120`, `compute capability: 6.1`), the release's own arch list
(read from the wheel into `core/_data/releases.json`) says whether that torch has kernels for that GPU:
if it has none, the symptom is the issue. A signature names the fact it can use (`Signature.fact`);
each fact is a function of the log's answers (`LogContext`) and the versions it states.

`module 'triton.language' has no attribute 'X'` is printed for any name one Triton lacks; when X is
a name earlier Triton releases define and the newest release read does not (the releases' own
files, `core/_data/source_history.json`), it is code written against an older Triton:
triton-api-removed.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.triage.context import LogContext, Predicate, Sighting

#: The GPU's capability as a log states it: torch's own warning (`with CUDA capability sm_120`),
#: deviceQuery and nvidia-smi (`CUDA Capability Major/Minor version number: 6.1`, `compute capability:
#: 8.6`), or `torch.cuda.get_device_capability()` printed (`(6, 1)`).
CAPABILITY = (
    r"capability(?: Major/Minor version number)?[:\s]+(?:sm_(\d{2,3})\b|(\d{1,2})\.(\d)\b)"
    r"|get_device_capability\(\)[^\n]{0,24}\((\d{1,2}), (\d)\)"
)
_CAPABILITY = re.compile(CAPABILITY, re.IGNORECASE)


def gpu_capability(text: str) -> Optional[int]:
    """`sm_120` -> 120, `6.1` -> 61, `(8, 6)` -> 86."""
    m = _CAPABILITY.search(text)
    if not m:
        return None
    if m.group(1):
        return int(m.group(1))
    major, minor = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
    return int(major) * 10 + int(minor)


def gpu_arch_missing(
    context: LogContext, versions: Mapping[str, List[str]]
) -> Optional[Tuple[Sighting, str]]:
    """The log's torch has no kernel (and no PTX) for the log's GPU, by that release's arch list."""
    from inductor_doctor.core.releases import variant_facts
    from inductor_doctor.kb._gpus import support

    seen = context.seen.get((CAPABILITY, re.IGNORECASE))
    torches = versions.get("torch") or []
    if seen is None or not torches:
        return None
    device = gpu_capability(" ".join(seen.text))
    if device is None:
        return None
    for stated in torches:
        public, _, local = stated.partition("+")
        tag = local if local.startswith(("cu", "cpu")) else None
        variant = variant_facts(public, tag, "linux", "x86_64")
        newer_only = False
        if variant is None and tag is not None:
            # That CUDA variant's list was not read: PyPI's build of the release stands in, but only for
            # a GPU newer than all it serves (variants differ in the old GPUs they keep, not the newest).
            variant, newer_only = variant_facts(public, None, "linux", "x86_64"), True
        archs = (variant or {}).get("archs")
        if not archs or variant is None:
            continue
        how, _entry = support(device, archs)
        codes = [int("".join(c for c in a.split("_")[-1] if c.isdigit()) or 0) for a in archs]
        if how == "none" and (not newer_only or device > max(codes)):
            return seen, (
                f"the log's torch {stated} was built for {' '.join(archs)} ({variant['source']}): "
                f"the GPU's sm_{device} (line {seen.line}) has no kernel and no PTX there"
            )
    return None


#: A Triton attribute the code asked for.
TRITON_ATTRIBUTE = r"module '(triton(?:\.\w+)*)' has no attribute '(\w+)'"


def triton_name_removed(
    context: LogContext, versions: Mapping[str, List[str]]
) -> Optional[Tuple[Sighting, str]]:
    """The Triton attribute the log's code uses is one that earlier Triton releases define and the
    newest one read does not, nor any Triton release the log states."""
    from inductor_doctor.core import source_history as history

    seen = context.seen.get((TRITON_ATTRIBUTE, 0))
    m = re.search(TRITON_ATTRIBUTE, "\n".join(seen.text)) if seen else None
    found = history.triton_name(m.group(1), m.group(2)) if m else None
    if seen is None or m is None or found is None or not found[1]:
        return None
    releases = history.triton_releases()
    last = history.last(found[1])
    if last is None or last == releases[-1]:
        return None  # the newest Triton read still has it: not a removal
    stated = [r for r in (history.release_of(v) for v in versions.get("triton") or []) if r]
    if any(history.covers(found[1], r, releases[-1]) for r in stated):
        return None  # the log's own Triton has it: something else is wrong
    gone = history.after(releases, last)
    return seen, f"Triton {gone} removed {m.group(2)} (the releases' files): code written for an older Triton"


Fact = Callable[[LogContext, Mapping[str, List[str]]], Optional[Tuple[Sighting, str]]]
FACTS: Dict[str, Fact] = {"gpu-arch-missing": gpu_arch_missing, "triton-name-removed": triton_name_removed}
#: The log-wide questions each fact asks of the stream.
FACT_PREDICATES: Dict[str, Tuple[Predicate, ...]] = {
    "gpu-arch-missing": ((CAPABILITY, re.IGNORECASE),),
    "triton-name-removed": ((TRITON_ATTRIBUTE, 0),),
}
