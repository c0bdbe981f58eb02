"""Windows: the Visual C++ runtime the process loads is older than the MSVC that built torch's or
Triton's DLLs (or missing).

A DLL built by MSVC 14.xx needs a Visual C++ runtime (msvcp140.dll, vcruntime140.dll,
vcruntime140_1.dll) of that release or newer: Microsoft's redistributable is backward compatible only
(a runtime older than the toolset lacks what the newer code calls; VS 2022 17.10 changed std::mutex's
constructor, for one). torch 2.9's Windows wheels are linked by MSVC 14.42 where 2.8's were by 14.38
(read from their c10.dll here), so a machine whose newest redistributable predates that, or a conda
environment that keeps an old msvcp140.dll beside python.exe (searched before System32), fails at
`import torch`: "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed.
Error loading ...\\torch\\lib\\c10.dll". triton-windows' libtriton.pyd fails the same way, or with "DLL
load failed while importing libtriton" when a runtime DLL is missing.

The probe reads each runtime DLL's copy the loader takes first (python.exe's directory, torch/lib,
System32) and its file version, and the linker version of torch's c10.dll and Triton's libtriton.pyd,
from their bytes (probe/pe.py): the rule compares them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._windows import windows_facts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


#: Visual Studio 2022 17.10's toolset (14.40) made std::mutex's constructor constexpr: its code crashes or
#: fails to initialise with an msvcp140.dll older than 14.40 (Microsoft's STL changelog for 17.10). Older
#: runtimes under older toolsets are unsupported, but not known to break.
BREAK = (14, 40)


def release(version: Optional[str]) -> Optional[Tuple[int, int]]:
    """"14.29.30133.0" -> (14, 29)."""
    parts = (version or "").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


def rule(facts: Facts) -> List[RuleOutcome]:
    win = windows_facts(facts, "the Visual C++ runtime is Windows'")
    if isinstance(win, list):
        return win
    if not win.msvc_built:
        return one(Status.INCONCLUSIVE, "which MSVC built torch's DLLs could not be read (no "
                   "torch/lib/c10.dll)")
    newest_lib, newest = max(win.msvc_built.items(), key=lambda kv: release(kv[1]) or (0, 0))
    need = release(newest) or (14, 0)
    problems, fine = [], []
    broken = False  # a runtime across the 14.40 line from a DLL built on its far side
    for dll in win.vc_runtime:
        if dll.path is None:
            if dll.name == "msvcp140.dll":  # vcruntime140.dll: python.exe itself could not start without it
                problems.append(f"no {dll.name} where Windows looks (python.exe's folder, torch\\lib, "
                                "System32)")
            continue
        have = release(dll.version)
        if have is None:
            continue
        if have < need:
            broken = broken or (need >= BREAK and have < BREAK)
            newer = [o for o in dll.others if (release(o.rsplit("(", 1)[-1].rstrip(")")) or (0, 0))
                     >= need]
            shadow = f"; a newer one further down the search order is shadowed: {newer[0]}" if newer else ""
            problems.append(f"{dll.path} is {dll.version}, older than the MSVC {newest} that built "
                            f"{newest_lib}{shadow}")
        else:
            fine.append(f"{dll.name} {dll.version}")
    if problems and (broken or any(p.startswith("no ") for p in problems)):
        return one(Status.AFFECTED, "; ".join(problems) + ": loading it fails ('[WinError 1114] A dynamic "
                   "link library (DLL) initialization routine failed', or 'DLL load failed')",
                   built=dict(win.msvc_built))
    if problems:
        return one(Status.LIKELY, "; ".join(problems) + ": Microsoft supports a runtime only as new as the "
                   "toolset that built the DLL (the known break is at 14.40, not crossed here)",
                   built=dict(win.msvc_built))
    if not fine:
        return one(Status.INCONCLUSIVE, "the Visual C++ runtime's version could not be read")
    return one(Status.OK, f"{', '.join(fine)}: at least the MSVC {newest} that built {newest_lib}")
