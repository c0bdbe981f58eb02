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
from inductor_doctor.kb._catalog import is_gpu_torch, one, torch_label, unshadow_triton
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: torch minor -> the Triton minor its Linux wheels pin (core/_data/releases.json; a test keeps the two
#: in step). triton-windows follows the same numbering, and its newest release serves only the
#: newest torch: an unpinned `pip install triton-windows` is the skew triton-version-skew reports.
WINDOWS_TRITON = {"2.5": "3.1", "2.6": "3.2", "2.7": "3.3", "2.8": "3.4", "2.9": "3.5", "2.10": "3.6",
                  "2.11": "3.6", "2.12": "3.7", "2.13": "3.7", "2.14": "3.8"}  # no triton-windows 3.9 yet


def _windows(torch: str, triton: str) -> Workaround:
    return Workaround(f"On Windows, install the community build of Triton made for torch {torch} "
                      f"(triton-windows {triton}.x; unpinned, pip takes the newest, made for the "
                      "newest torch)",
                      f'pip install "triton-windows=={triton}.*"', "install",
                      applies={"torch": f"=={torch}.*"})


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


#: The issue's workarounds as written; `advise` puts first what the probe found.
ISSUE_WORKAROUNDS = (
    Workaround(
        "Install the Triton release this torch was built against (its wheel metadata pins it; "
        "pip resolves it when torch is reinstalled without --no-deps)",
        "pip install \"$(python -c 'import importlib.metadata as m; print(next(r.split(\";\")[0].strip() "
        "for r in m.requires(\"torch\") if r.startswith(\"triton\")))')\"",
        "install",
    ),
    *(_windows(torch, triton) for torch, triton in WINDOWS_TRITON.items()),
    Workaround(
        "Keep the GPU code eager, or compile only for the CPU, until Triton is available",
        None,
        "code",
    ),
)


def advise(facts: Facts) -> List[Workaround]:
    """With a copy of Triton shadowing the installed one, installing Triton again changes nothing:
    the first thing is to take that copy off the import path."""
    first = unshadow_triton(facts)
    if first is None:
        return list(ISSUE_WORKAROUNDS)
    return list(Workaround.pick(ISSUE_WORKAROUNDS, first, drop=["pip install"]))

ISSUE = KnownIssue(
    id="triton-missing",
    title="GPU torch.compile raises TritonMissing: Triton is not installed, does not import, or another "
          "copy shadows it",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "pytorch/pytorch#125093",
        "pytorch/pytorch#143406",
        "pytorch/pytorch#90768",
        "pytorch/pytorch#136361",
    ),
    aliases=("TritonMissing", "no-triton", "cannot-find-working-triton"),
    summary=(
        "Inductor compiles GPU graphs to Triton kernels. When torch was built for CUDA or ROCm but the "
        "`triton` package is absent, or installed but failing to import, the first torch.compile on a "
        "GPU stops with `TritonMissing: Cannot find a working triton installation`. Common on Windows, "
        "after `pip install --no-deps torch`, and with torch 2.5 on Python 3.13 (whose wheel requires "
        "Triton only below 3.13). CPU compiles are unaffected."
    ),
    signatures=(
        # Not `raise TritonMissing(...)`: a traceback quotes that source line above the sibling
        # GPUTooOldForTriton error too (unslothai/unsloth#2816).
        Signature(r"\bTritonMissing\b(?!\()", note="torch._inductor.exc.TritonMissing (torch >= 2.6)"),
        Signature(
            r"Cannot find a working triton installation",
            note="the message, also raised as RuntimeError by older torch",
        ),
        Signature(r"No module named '?triton'?", strength="partial",
                  note="the import error underneath, also seen outside Inductor"),
    ),
    workarounds=ISSUE_WORKAROUNDS,
    rule=rule,
    advise=advise,
)
