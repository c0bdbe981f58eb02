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
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import not_installed

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
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    if t.hip or not t.cuda:
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} loads no CUDA libraries")
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


#: The log's own LD_LIBRARY_PATH naming a CUDA, cuDNN or NVIDIA library directory (`LD_LIBRARY_PATH=...`,
#: `export LD_LIBRARY_PATH=...`, `echo $LD_LIBRARY_PATH` then its value, a collect_env line).
_LD_PATH = (r"LD_LIBRARY_PATH\W{0,6}(?:[^\n]*\n)?[^\n]*(?:cuda|cudnn|nvidia|hpc_sdk|math_libs)[^\n:]*"
            r"(?:lib|lib64)\b")
_LD_PATH_SAYS = "LD_LIBRARY_PATH naming a CUDA library directory (its libraries win over the wheels')"

ISSUE = KnownIssue(
    id="cuda-libs-shadowed",
    title="CUDA libraries shadowed: LD_LIBRARY_PATH or a system CUDA loads instead of torch's nvidia wheels",
    severity=Severity.ERROR,
    devices=(DeviceKind.CUDA,),
    upstream=(
        "pytorch/pytorch#134929",
        "pytorch/pytorch#152783",
        "pytorch/pytorch#138460",
        "pytorch/pytorch#111469",
        "infiniflow/ragflow#4466",
        "vllm-project/vllm#6118",
        "NVIDIA/cuvs#1794",
    ),
    aliases=("nvjitlink-undefined-symbol", "ld-library-path-cuda", "libcusparse-undefined-symbol"),
    summary=(
        "A pip-installed torch uses the CUDA libraries of its nvidia-* wheels. A system CUDA toolkit or "
        "conda environment on LD_LIBRARY_PATH (or an LD_PRELOAD) can load another libnvJitLink, libcudart, "
        "libcublas or libcudnn in their place: the wheels' libraries search LD_LIBRARY_PATH before their "
        "own RUNPATH. When that copy is older, `import torch` fails with `libcusparse.so.12: undefined "
        "symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12`; when it is merely different, "
        "kernels fail later. torch >= 2.6 preloads nvJitLink and NVRTC from the wheels to avoid the "
        "first; remove the CUDA directory from LD_LIBRARY_PATH."
    ),
    signatures=(
        Signature(r"nvidia/\w+/lib/lib\w+\.so\.\d+: undefined symbol: __nvJitLink\w+, version "
                  r"libnvJitLink\.so\.\d+",
                  note="a wheel's libcusparse/libcusolver bound to an older libnvJitLink"),
        # The same mismatch beside the log's own LD_LIBRARY_PATH naming a CUDA library directory: the
        # directory whose libraries win over the wheels' is in the log, so it is this issue.
        Signature(r"undefined symbol: __nvJitLink\w+, version libnvJitLink\.so\.\d+",
                  anchor=_LD_PATH, anchor_says=_LD_PATH_SAYS,
                  note="a libcusparse bound to an older libnvJitLink that LD_LIBRARY_PATH puts first"),
        Signature(r"undefined symbol: __nvJitLink\w+, version libnvJitLink\.so\.\d+", strength="partial",
                  note="the same mismatch, wherever libcusparse came from"),
        # torch's own check of the cuDNN it finds against the one it was built with, in each wording:
        # torch/backends/cudnn/__init__.py
        # - 2.x (2.5.1 line 48, 2.6.0 line 48, 2.9.0 line 55, 2.13.0 line 61, read in the installed
        #   wheels): "cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found
        #   runtime version (8, 9, 2). PyTorch already comes bundled with cuDNN. ..." (two spaces, and
        #   "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn" where it names one);
        # - 1.x with tuples (the releases with `allow_tf32`, 1.7 on): "cuDNN version incompatibility:
        #   PyTorch was compiled against (8, 0, 4) but linked against (7, 6, 5)";
        # - 1.x before, with integers: "cuDNN version incompatibility: PyTorch was compiled against 7603
        #   but linked against 7005", and the oldest "cuDNN version mismatch: ...".
        Signature(r"cuDNN version (?:incompatibility|mismatch): PyTorch was compiled\s+against "
                  r"(?:\(\d+, \d+, \d+\)|\d+)\s+but\s+(?:found runtime version|linked against) "
                  r"(?:\(\d+, \d+, \d+\)|\d+)", note="torch/backends/cudnn: another libcudnn"),
        Signature(r"undefined symbol: \w+, version libcu\w+\.so\.\d+", strength="partial"),
    ),
    workarounds=(
        Workaround("Take the system CUDA out of the loader's path for Python (torch brings its own)",
                   "unset LD_LIBRARY_PATH", "env"),
        Workaround("Or put the wheel's directory first, e.g. for nvJitLink",
                   "export LD_LIBRARY_PATH=\"$(python -c 'import nvidia.nvjitlink, os; "
                   "print(os.path.dirname(nvidia.nvjitlink.__file__))')/lib:$LD_LIBRARY_PATH\"", "env"),
        Workaround("Where the wheel itself is too old (another package pinned it), reinstall the one torch "
                   "requires", "pip install -U --force-reinstall nvidia-nvjitlink-cu12", "install"),
        Workaround("Or upgrade to torch >= 2.6, which preloads nvJitLink and NVRTC from its wheels",
                   "pip install -U 'torch>=2.6'", "upgrade"),
        Workaround("See which copies a live torch maps",
                   "python -c 'import torch; print(open(\"/proc/self/maps\").read())' "
                   "| grep -E 'libcu|libnv' | awk '{print $6}' | sort -u", "other"),
    ),
    rule=rule,
)
