"""Another copy of a CUDA library loads instead of the one torch's nvidia-* wheel ships.

A pip-installed torch is built against the CUDA libraries of its `nvidia-*` wheels. A system toolkit
or conda environment on LD_LIBRARY_PATH, or an LD_PRELOAD, can put another libnvJitLink, libcudart,
libcublas, libcudnn ... in their place: torch's own libraries find the wheels first through their
RPATHs, but the wheels' libraries look in LD_LIBRARY_PATH before their RUNPATHs, so libcusparse
picks up a system libnvJitLink. An older one lacks the versioned symbols the wheel needs and
`import torch` fails: "libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version
libnvJitLink.so.12" (pytorch/pytorch#134929, #152783). torch 2.6 and later preload nvJitLink and
NVRTC from the wheels to avoid exactly this (pytorch/pytorch#138460, #145580).

The probe replays glibc's search for the import (probe/cuda_libs.py) and checks the symbols the
importing library needs against the copy that would load: a missing symbol is conclusive. The live
probe reads /proc/self/maps after `import torch` for what was really mapped.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import not_cuda_torch

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import CudaLibInfo, Facts


def _where(lib: CudaLibInfo) -> str:
    return f"{lib.resolved} (via {lib.via})"


def _loaded_elsewhere(lib: CudaLibInfo) -> bool:
    """The live torch mapped another build than the wheel's (read by the live probe)."""
    if not lib.loaded or not lib.wheel or os.path.realpath(lib.loaded) == os.path.realpath(lib.wheel):
        return False
    return lib.loaded_same_build is not True


def rule(facts: Facts) -> List[RuleOutcome]:
    not_cuda = not_cuda_torch(facts, "loads no CUDA libraries")
    if not_cuda:
        return not_cuda
    libs = facts.cuda.libs
    if not libs:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} does not ship its CUDA libraries as "
                   "nvidia-* wheels here: it uses the system's by design")
    for lib in libs:
        if lib.missing_symbols and lib.resolved == lib.wheel:
            lacks = ", ".join(lib.missing_symbols[:3])
            return one(Status.AFFECTED, f"torch's own {lib.soname} ({lib.wheel}) is older than "
                       f"{lib.needed_by} needs: it lacks {lacks}, so `import torch` fails with 'undefined "
                       f"symbol: {lib.missing_symbols[0]}' (a nvidia-* wheel older than torch requires)",
                       soname=lib.soname, wheel=lib.wheel)
        if lib.missing_symbols:
            names = ", ".join(lib.missing_symbols[:3])
            return one(Status.AFFECTED, f"{lib.needed_by} would load {lib.soname} from {_where(lib)}, not "
                       f"torch's wheel ({lib.wheel}), and that copy lacks {names}: `import torch` fails with "
                       f"'undefined symbol: {lib.missing_symbols[0]}'", soname=lib.soname,
                       resolved=lib.resolved, wheel=lib.wheel)
    missing = [lib for lib in libs if lib.resolved is None]
    if missing:
        names = ", ".join(lib.soname for lib in missing)
        return one(Status.AFFECTED, f"the loader finds no {names} for {torch_label(facts)} (the wheel's "
                   "directory is not searched for it): the import fails with 'cannot open shared object "
                   "file'")
    live_other = [lib for lib in libs if _loaded_elsewhere(lib)]
    if live_other:
        lib = live_other[0]
        return one(Status.AFFECTED, f"the live torch mapped {lib.soname} from {lib.loaded}, not its wheel's "
                   f"{lib.wheel}", soname=lib.soname, loaded=lib.loaded)
    other = [lib for lib in libs if lib.same_build is False]
    if other:
        lib = other[0]
        more = f" (and {len(other) - 1} more)" if len(other) > 1 else ""
        return one(Status.LIKELY, f"{lib.soname} would load from {_where(lib)}, a different build than "
                   f"torch's wheel ({lib.wheel}){more}; the import resolves, but mixed CUDA library versions "
                   "fail later", Basis.STATIC, soname=lib.soname, resolved=lib.resolved)
    checked = len(libs)
    live = " (and the live torch mapped them)" if any(lib.loaded for lib in libs) else ""
    return one(Status.OK, f"all {checked} CUDA libraries of torch's nvidia-* wheels load from the wheels"
               f"{live}")
