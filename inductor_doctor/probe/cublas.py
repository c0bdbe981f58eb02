"""The cuBLAS wheel beside torch, and the version torch's own metadata pins.

A pip-installed CUDA torch requires one `nvidia-cublas-cu12` (CUDA 12 builds) or `nvidia-cublas`
(CUDA 13 builds) release, exactly; another package's requirement, a `pip install -U`, or an index
that serves another build can leave a different one installed, and libtorch_cuda then calls a cuBLAS
it was not built and tested with (cublas-pairing). Both versions come from the target's package
metadata, which the target's description already lists: no import, no file beyond it.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

from inductor_doctor.core.facts import CublasInfo
from inductor_doctor.probe import Step

WHEELS = ("nvidia-cublas-cu12", "nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu11")
_PIN = re.compile(r"^\s*(nvidia[-_]cublas(?:[-_]cu\d+)?)\s*\(?\s*([<>=!~][^;)]*)\)?\s*(?:;.*)?$", re.I)


def read(target: Dict[str, Any], pkgs: Dict[str, str]) -> Optional[CublasInfo]:
    pinned_wheel, pinned = None, None
    for req in target.get("torch_requires") or []:
        m = _PIN.match(str(req))
        if m:
            pinned_wheel, pinned = m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")
            break
    wheel = next((w for w in WHEELS if w in pkgs), None)
    if wheel is None and pinned is None:
        return None
    installed = pkgs.get(wheel) if wheel else None
    return CublasInfo(wheel=wheel or pinned_wheel, installed=installed, pinned=pinned)


STEP = Step("cublas", ("target", "packages"), read, lambda m, known: None, "cuBLAS wheel")
