"""Install workarounds written for this machine, instead of a fixed example.

The issues whose way out is installing something (another torch build, a CUDA toolkit) used to
show one example for everyone ("cu126 shown", "12.8 shown"), which is wrong for most machines: a
cu126 line on a Blackwell card, CUDA 12.8 packages for a torch built with CUDA 13.0. Here they get
the answer for this machine instead:

* a torch build (torch-cpu-only-build, cuda-driver-too-old, torch-gpu-arch-missing and the ptxas
  issues): the `plan --suggest` answer for the probe's GPUs, driver, Python, glibc and compiler,
  as its pip line, with `--force-reinstall`;
* the CUDA toolkit (cuda-toolkit-missing): the release the installed torch was built with, and the
  pip packages of that CUDA major (`nvidia-cuda-nvcc-cu12==12.8.*`; from CUDA 13 without the
  suffix: `nvidia-cuda-nvcc==13.0.*`).

The issue's own example commands of the same kind are dropped; its advice stays.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from inductor_doctor.core.model import Finding, Status, Workaround

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.plan.suggest import Solution

#: Issues whose way out is another torch build.
REINSTALL = ("torch-cpu-only-build", "cuda-driver-too-old", "torch-gpu-arch-missing",
             "ptxas-unsupported-arch", "triton-ptxas-driver")
TOOLKIT = "cuda-toolkit-missing"


def toolkit_workarounds(cuda: str) -> List[Workaround]:
    """The toolkit of CUDA `cuda` ("13.0"): where it installs, and the pip packages of its major."""
    major = cuda.split(".")[0]
    suffix = f"-cu{major}" if int(major) < 13 else ""
    return [
        Workaround(f"Install the CUDA toolkit of torch's CUDA release, {cuda} (the distribution's "
                   f"cuda-toolkit-{cuda.replace('.', '-')} package or NVIDIA's installer), and point "
                   "CUDA_HOME at it",
                   f"export CUDA_HOME=/usr/local/cuda-{cuda} PATH=/usr/local/cuda-{cuda}/bin:$PATH", "env"),
        Workaround(f"Without root, pip provides nvcc and the headers of CUDA {cuda}",
                   f"pip install 'nvidia-cuda-nvcc{suffix}=={cuda}.*' "
                   f"'nvidia-cuda-runtime{suffix}=={cuda}.*'",
                   "install"),
    ]


def reinstall_workaround(solution: Solution) -> Optional[Workaround]:
    """The suggested build as a reinstall line; None when no build is clean here."""
    chosen = solution.chosen
    if chosen is None or solution.unavoidable:
        return None
    c = chosen.candidate
    what = f"torch {c.torch} ({c.variant}" + (f", Triton {c.triton}" if c.triton else "") + ")"
    return Workaround(f"Install the build for this machine: {what}, the newest with no known issue "
                      "here (`inductor-doctor plan --suggest` says why; `--verify` tries it in a scratch "
                      "venv first)",
                      c.pip().replace("pip install ", "pip install --force-reinstall ", 1), "install")


def _is_example(w: Workaround) -> bool:
    return w.kind == "install" and w.command is not None and w.command.startswith("pip install")


def tailor(findings: Sequence[Finding], facts: Facts) -> List[Finding]:
    """`findings` with the install workarounds of the issues above written for this machine."""
    bad = (Status.AFFECTED, Status.LIKELY)
    wanted = [f for f in findings if f.status in bad and (f.id in REINSTALL or f.id == TOOLKIT)]
    if not wanted:
        return list(findings)
    cache: Dict[str, Optional[Workaround]] = {}
    out = []
    for f in findings:
        if f not in wanted:
            out.append(f)
            continue
        mine: List[Workaround] = []
        if f.id == TOOLKIT and facts.torch is not None and facts.torch.cuda:
            cuda = ".".join(facts.torch.cuda.split(".")[:2])
            mine = toolkit_workarounds(cuda)
            kept = [w for w in f.workarounds if w.kind not in ("env", "install") or w.command is None]
        elif f.id in REINSTALL:
            if "solution" not in cache:
                cache["solution"] = reinstall_workaround(_solve(facts))
            w = cache["solution"]
            mine = [w] if w is not None else []
            kept = [w for w in f.workarounds if not (mine and _is_example(w))]
        else:
            kept = list(f.workarounds)
        out.append(replace(f, workarounds=tuple(mine + kept)) if mine else f)
    return out


def _solve(facts: Facts) -> Solution:
    from inductor_doctor.plan.suggest import machine_from_facts, solve

    return solve(machine_from_facts(facts))
