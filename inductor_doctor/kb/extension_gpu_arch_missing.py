"""A prebuilt extension has no kernels for this GPU: its ops fail with "no kernel image is available".

An extension's CUDA code is compiled for the architectures of its build (TORCH_CUDA_ARCH_LIST or
-gencode flags): a cubin per architecture, and PTX where the build asked for it. The same
compatibility as torch's own kernels applies (kb/_gpus.py: a cubin runs on the same major version
and an equal or higher minor, sm_90a only on 9.0; PTX is compiled by the driver for any newer GPU).
The probe reads the architectures from the `.nv_fatbin` section of each installed library that links
torch (probe/extensions.py); the GPUs are the ones torch sees.

A library whose device code is all architecture-specific (`sm_90a`, `sm_100a`) is a variant its
package loads on that GPU only (torchao's `_C_cutlass_90a`): it is never judged on another GPU. A
package none of whose other libraries has code for the GPU cannot run its kernels there:
`affected`. One with some libraries that can and some that cannot is `likely`: the ops of the
others fail when called.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one, outcome
from inductor_doctor.kb._gpus import gpus_with_capability, no_visible_gpu, support
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import ExtensionLib, Facts


def _code(lib: ExtensionLib) -> List[str]:
    return list(lib.cuda_archs) + list(lib.ptx_archs)


def _variant(lib: ExtensionLib) -> bool:
    """Device code all for one architecture's own features (`sm_90a`): loaded on that GPU only."""
    code = _code(lib)
    return bool(code) and all(a.endswith("a") for a in code)


def _packages(facts: Facts) -> Dict[str, List[ExtensionLib]]:
    out: Dict[str, List[ExtensionLib]] = {}
    scan = facts.extensions
    for lib in scan.libs if scan else []:
        if _code(lib):
            name = f"{lib.distribution} {lib.version}" if lib.version else lib.distribution
            out.setdefault(name, []).append(lib)
    return out


def _judge(cc: int, libs: List[ExtensionLib]) -> Tuple[List[ExtensionLib], List[ExtensionLib], bool]:
    """(libraries without code for sm_<cc>, those with it, whether any serves it only through PTX)."""
    bad, good, jit = [], [], False
    for lib in libs:
        how, _ = support(cc, _code(lib))
        if how == "none":
            if not _variant(lib):
                bad.append(lib)
        else:
            good.append(lib)
            jit = jit or how == "ptx"
    return bad, good, jit


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    if t is None or not t.version:
        return not_installed("torch")
    if not facts.gpus:
        return no_visible_gpu(facts)
    if facts.extensions is None:
        return one(Status.INCONCLUSIVE, "the installed packages' compiled extensions were not read")
    packages = _packages(facts)
    if not packages:
        return one(Status.NOT_APPLICABLE, "no installed package ships GPU code in a library that links torch")
    out: List[RuleOutcome] = []
    for gpu, cap in gpus_with_capability(facts, out):
        cc = cap[0] * 10 + cap[1]
        affected, partly, fine, jit_names = [], [], [], []
        for name, libs in packages.items():
            bad, good, jit = _judge(cc, libs)
            if bad and not good:
                affected.append(f"{name} ({_has(bad[0])})")
            elif bad:
                names = ", ".join(os.path.basename(b.path) for b in bad[:3])
                partly.append(f"{name}: {names} ({_has(bad[0])})")
            elif good:
                fine.append(name)
                if jit:
                    jit_names.append(name)
        where = f"{gpu.name} (sm_{cc})"
        if affected:
            out.append(outcome(Status.AFFECTED, f"{'; '.join(affected)}: no cubin or PTX runs on {where}, so "
                               "its kernels fail with 'no kernel image is available for execution on the "
                               "device'",
                               device=gpu.device, packages=affected))
        elif partly:
            out.append(outcome(Status.LIKELY, f"{'; '.join(partly)}: no code for {where}; the ops in those "
                               "libraries fail there with 'no kernel image is available' (the package's "
                               "other libraries have code for it)", device=gpu.device))
        else:
            jit = (f" ({', '.join(jit_names)} through PTX the driver compiles on first use)"
                   if jit_names else "")
            out.append(outcome(Status.OK, f"{', '.join(fine)} carry code for {where}{jit}",
                               device=gpu.device))
    return out


def _has(lib: ExtensionLib) -> str:
    return f"{os.path.basename(lib.path)} has {' '.join(_code(lib))}"
