"""A cuBLAS that does not pair with the torch build: "CUBLAS_STATUS_INVALID_VALUE when calling cublasGemmEx".

A CUDA torch's wheel pins one cuBLAS wheel release (`Requires-Dist: nvidia-cublas-cu12==...`); the
loader maps whichever is installed. Known-bad pairings, from the threads that found them:

* torch 2.9.1 and 2.10 built for CUDA 12.8 with cuBLAS 12.8 (`nvidia-cublas-cu12` 12.8.*, which is
  what those wheels pin: 12.8.4.1, read from each release's METADATA): half and bf16 GEMMs fail with
  CUBLAS_STATUS_INVALID_VALUE on H100/GH200 and RTX 4090 (pytorch/pytorch#174949: "2.10.0+cu128 has
  the same problem", the cu129 build is fine, "forcing the cublas version worked"; #170676: 2.9.1 on
  an RTX 4090 fails where 2.8.0, pinning the same cuBLAS, does not);
* cuBLAS 13.5.1.27 on RTX 50xx GPUs (sm_120; conda-forge/pytorch-cpu-feedstock#521).

Besides those, a cuBLAS other than the one torch pins is a pairing nobody tested. The canary runs the
GEMMs on each GPU: a reproduction is conclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, outcome, torch_label
from inductor_doctor.kb._gpus import gpus_with_capability, no_visible_gpu
from inductor_doctor.kb._rules import matches, not_cuda_torch

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: (torch releases, torch's CUDA, cuBLAS versions, GPU capabilities or None for all, source).
KNOWN_BAD = (
    (">=2.9.1,<2.11", "12.8", ">=12.8,<12.9", None, "pytorch/pytorch#174949, #170676"),
    (None, None, "==13.5.1.27", (12, 0), "conda-forge/pytorch-cpu-feedstock#521"),
)


def known_bad(torch_version: Optional[str], torch_cuda: Optional[str], cublas: Optional[str],
              capability: Optional[tuple]) -> Optional[str]:
    """The source of a known-bad pairing these versions fall in, or None."""
    for torch_spec, cuda, cublas_spec, cap, source in KNOWN_BAD:
        if torch_spec and matches(torch_version, torch_spec) is not True:
            continue
        if cuda and (torch_cuda or "") != cuda:
            continue
        if matches(cublas, cublas_spec) is not True:
            continue
        if cap is not None and (capability is None or capability[0] != cap[0]):
            continue
        return source
    return None


def rule(facts: Facts) -> List[RuleOutcome]:
    not_cuda = not_cuda_torch(facts, "calls no cuBLAS")
    if not_cuda:
        return not_cuda
    if not facts.gpus:
        return no_visible_gpu(facts)
    t, cb = facts.torch, facts.cublas
    assert t is not None
    if cb is None or not cb.installed:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} uses a cuBLAS of no pip wheel (a conda or "
                   "system library): the canary's GEMMs decide")
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        source = known_bad(t.version, t.cuda, cb.installed, cap)
        if source:
            out.append(outcome(Status.LIKELY, f"{cb.wheel} {cb.installed} with {torch_label(facts)} on "
                               f"{gpu.name} is a known-bad pairing ({source}): half/bf16 GEMMs fail with "
                               "CUBLAS_STATUS_INVALID_VALUE", Basis.VERSION, device=gpu.device))
        elif cb.pinned and matches(cb.installed, cb.pinned) is False:
            out.append(outcome(Status.LIKELY, f"torch pins {cb.wheel}{cb.pinned}, and {cb.installed} is "
                               "installed (another package's requirement, or an upgrade): a cuBLAS the build "
                               "was not tested with", Basis.VERSION, device=gpu.device))
        else:
            pin = f", the release torch pins ({cb.pinned})" if cb.pinned else ""
            out.append(outcome(Status.OK, f"{cb.wheel} {cb.installed}{pin}, in no known-bad pairing",
                               Basis.VERSION, device=gpu.device))
    return out

