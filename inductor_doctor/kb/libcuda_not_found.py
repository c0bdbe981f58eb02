"""Triton cannot find or link libcuda: "libcuda.so cannot found!" / "cannot find -lcuda".

Triton builds a small C launcher per kernel and links it with `-lcuda`. It looks for the driver
library through `TRITON_LIBCUDA_PATH` (read from Triton 2.2; 2.0 and 2.1 ignore it), else the
directories of `libcuda.so.1` in the `ldconfig -p` cache, else `LD_LIBRARY_PATH`; the linker then
needs a plain `libcuda.so` there. From Triton 3.6 the launcher links `-l:libcuda.so.1` and the
search asserts on `libcuda.so.1` (`backends/nvidia/driver.py`: `libraries = ['libcuda.so.1']`), so
the plain link is needed no more; only a missing driver library still fails. Containers, WSL and
Colab often have only `libcuda.so.1`, or a stale loader cache. The probe performs Triton's own
search, so the rule is conclusive and needs no canary.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from packaging.version import Version

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import no_gpu, one
from inductor_doctor.kb._gpus import hidden_reason
from inductor_doctor.kb._rules import not_installed, release
from inductor_doctor.probe.cuda import is_elf_file

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: Triton links `-l:libcuda.so.1` from here on: no plain libcuda.so needed.
LINKS_SONAME = Version("3.6")
#: Triton reads TRITON_LIBCUDA_PATH from here on.
READS_ENV = Version("2.2")


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    cuda = facts.cuda
    if not facts.gpus and not cuda.driver_version:
        return no_gpu("no NVIDIA driver here: containers get libcuda from the runtime when they start")
    hidden = hidden_reason(facts)
    if hidden:
        return no_gpu(f"{hidden}: Triton links no GPU launcher")
    triton = release(facts.triton.version)
    soname = triton is not None and triton >= LINKS_SONAME
    needed = "libcuda.so.1" if soname else "libcuda.so"
    explicit = facts.env.get("TRITON_LIBCUDA_PATH")
    if explicit and (triton is None or triton >= READS_ENV):
        if is_elf_file(os.path.join(explicit, needed)):
            return one(Status.OK, f"TRITON_LIBCUDA_PATH={explicit} holds {needed}")
        return one(Status.AFFECTED, f"TRITON_LIBCUDA_PATH={explicit} has no {needed}: "
                   + ("Triton asserts 'libcuda.so cannot found!'" if soname else
                      "linking Triton's launcher fails with 'cannot find -lcuda'"))
    if not cuda.libcuda_paths:
        if cuda.libcuda_missing:
            return one(Status.AFFECTED, f"the ldconfig cache lists {cuda.libcuda_missing[0]}, which is not "
                       "there (a stale loader cache, or its directory hidden or unmounted): Triton searches "
                       "only the cache's directories and asserts 'libcuda.so cannot found!'",
                       missing=cuda.libcuda_missing[0])
        return one(Status.AFFECTED, "no libcuda.so.1 in the ldconfig cache or LD_LIBRARY_PATH: Triton "
                   "asserts 'libcuda.so cannot found!'")
    if soname:
        return one(Status.OK, f"libcuda.so.1 found where Triton looks ({cuda.libcuda_paths[0]}); Triton "
                   f"{facts.triton.version} links it by that name (-l:libcuda.so.1, from 3.6)")
    if cuda.libcuda_so_unversioned is False:
        where = ", ".join(sorted({os.path.dirname(p) for p in cuda.libcuda_paths}))
        return one(Status.AFFECTED, f"only libcuda.so.1 in {where}, no plain libcuda.so: Triton's "
                   "launcher link fails ('cannot find -lcuda')")
    if cuda.libcuda_so_unversioned is None:
        return one(Status.INCONCLUSIVE, f"libcuda.so.1 found ({cuda.libcuda_paths[0]}); whether a plain "
                   "libcuda.so is next to it is unknown")
    return one(Status.OK, f"libcuda found where Triton looks ({cuda.libcuda_paths[0]}, with libcuda.so)")
