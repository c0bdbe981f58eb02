"""No C compiler for Triton's launcher: "Failed to find C compiler. Please specify via CC".

Triton compiles a small C extension (its kernel launcher, and `cuda_utils`) the first time it runs
on a GPU, with `CC`, else `gcc`, else `clang` from PATH. Slim containers, Windows and conda envs
without a toolchain have none, and every GPU torch.compile fails although the CPU side and the
CUDA toolkit are fine. The probe runs Triton's own search and compiles a trivial C file with the
result, which is conclusive; no canary is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import compiler_label, compiler_missing, is_gpu_torch, one, torch_label
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.triton is None or not facts.triton.version:
        return not_installed("triton")
    if facts.torch is not None and facts.torch.version and not is_gpu_torch(facts):
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} never runs Triton on a GPU")
    cc = facts.cc
    gpus = bool(facts.gpus)
    broken = Status.AFFECTED if gpus else Status.LIKELY
    where = "" if gpus else " (no GPU here: it fails on the first GPU kernel)"
    if compiler_missing(cc) and cc.chosen_by == "CC":
        # Triton takes CC as it is and runs it: Python's own error for the executable comes out of its
        # build (a stale path, a folder, a path joined onto another), not "Failed to find C compiler".
        return one(broken, f"CC={cc.command} names no compiler that runs: Triton runs CC as it is when it "
                   "builds its launcher, and fails with FileNotFoundError (no such file) or PermissionError "
                   f"(a folder){where}")
    if compiler_missing(cc):
        return one(broken, f"neither CC, gcc nor clang found on PATH: Triton raises 'Failed to find C "
                   f"compiler' when it builds its launcher{where}")
    if cc.works is False:
        return one(broken, f"Triton's C compiler {compiler_label(cc)} cannot build a shared object "
                   f"({cc.error or 'unknown error'}){where}")
    if cc.works is None:
        return one(Status.INCONCLUSIVE, "the C compiler Triton would use was not probed")
    return one(Status.OK, f"Triton builds its launcher with {compiler_label(cc)}")
