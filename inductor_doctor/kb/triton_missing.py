"""A CUDA/ROCm torch without a usable Triton: every GPU `torch.compile` raises TritonMissing.

Inductor generates Triton for GPUs and checks `torch.utils._triton.has_triton()` when it creates a
GPU backend; a missing package, or one whose `import triton` fails, ends in `TritonMissing`. Typical
causes: Windows (no official Triton wheel), torch installed with `--no-deps`, a torch 2.5 wheel on
Python 3.13 (its `triton==3.1.0` requirement is limited to Python < 3.13), a broken Triton install.
A copy of `triton` that the interpreter finds before the installed distribution's own (a stale
tree on PYTHONPATH, a checkout in the working directory) is the same failure in another guise:
every compile runs that copy, whatever pip says is installed; the probe compares where `import
triton` goes with where the distribution put its package. Whether Triton is installed, imports,
and is the installed one is a plain fact, so no canary is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import is_gpu_torch, one, torch_label, unshadow_triton
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    if not is_gpu_torch(facts):
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)}: Inductor emits C++ for the CPU and "
                   "needs no Triton")
    label = torch_label(facts)
    gpus = bool(facts.gpus)
    # No GPU here (a `docker build`, a login node): the failure is certain once there is one.
    broken = Status.AFFECTED if gpus else Status.LIKELY
    where = "" if gpus else " (no GPU here: it fails on the first GPU compile)"
    triton = facts.triton
    if triton is None or not triton.version:
        pin = facts.torch.triton_requirement or facts.torch.triton_pin
        why = f"; torch requires `{pin}`, which was not installed" if pin else ""
        return one(broken, f"{label} but no triton installed{why}: GPU torch.compile raises "
                   f"TritonMissing{where}", Basis.STATIC)
    if triton.shadowed_install:
        copy = f"{triton.path}" + (f" (triton {triton.imported_version})" if triton.imported_version else "")
        differs = triton.imported_version is None or triton.imported_version != triton.version
        status = broken if differs else Status.LIKELY
        return one(status, f"`import triton` finds {copy}, not the installed {triton.distribution} "
                   f"{triton.version} ({triton.shadowed_install}): every GPU compile runs that copy"
                   + ("" if differs else ", the same release as the installed one but another tree")
                   + where, Basis.STATIC, shadow=triton.path)
    if triton.import_ok is False:
        err = (triton.import_error or "import failed").strip().splitlines()[-1][:200]
        return one(broken, f"triton {triton.version} is installed but `import triton` fails ({err}): "
                   f"GPU torch.compile raises TritonMissing{where}", Basis.STATIC)
    if triton.import_ok is None:
        return one(Status.OK, f"triton {triton.version} is installed (its import was not tried: "
                   "no live probe)", Basis.STATIC)
    return one(Status.OK, f"triton {triton.version} is installed and imports", Basis.STATIC)


def advise(facts: Facts) -> List[Workaround]:
    """With a copy of Triton shadowing the installed one, installing Triton again changes nothing:
    the first thing is to take that copy off the import path."""
    first = unshadow_triton(facts)
    if first is None:
        return list(ISSUE_WORKAROUNDS)
    return list(Workaround.pick(ISSUE_WORKAROUNDS, first, drop=["pip install"]))


#: The workarounds as the data file writes them; `advise` orders them by what the probe found.
ISSUE_WORKAROUNDS = known_issue(__name__).workarounds
#: torch minor -> the Triton minor of the triton-windows build made for it, as the data file's
#: workarounds pin them (core/_data/releases.json has torch's own pins; a test keeps the two in step).
WINDOWS_TRITON = {w.applies["torch"][2:-2]: (w.command or "").split("==")[1][:-3] for w in ISSUE_WORKAROUNDS
                  if "triton-windows" in (w.command or "")}
