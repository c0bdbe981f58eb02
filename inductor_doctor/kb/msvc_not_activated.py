"""MSVC installed but not activated, activated for the wrong architecture, too old, or `CC` naming a
folder: the Windows compiler environment the two compiles need.

Inductor compiles CPU kernels with `CXX`, else a bare `cl` on PATH (`torch/_inductor/cpp_builder.py`,
`get_cpp_compiler`: "Compiler: cl is not found" otherwise); triton-windows builds each launcher with
`CC`, else the MSVC a Developer Prompt activated (`VCINSTALLDIR`, `VCToolsVersion`), else its bundled
TinyCC, else `cl` on PATH (`triton/runtime/build.py`). A cl from `Hostx64\\x86` makes 32-bit objects
a 64-bit Python cannot link (LNK1112, LNK4272; woct0rdho/triton-windows#169); a cl on PATH without
`INCLUDE`/`LIB` (added by hand, not by vcvars) finds no headers (C1034, "vcruntime.h"); a `CC` that
names a folder or a path that is no longer there fails as "[WinError 5] Access is denied" or
"Failed to compile. cc_cmd" (triton-lang/triton-windows#30); Inductor passes `/std:c++20`, which cl
knows from 19.29 on. All of it is read from variables and files (probe/windows.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._windows import cl_version, windows_facts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, WindowsInfo

#: The first cl that takes `/std:c++20`, which Inductor passes on Windows (cpp_builder.py's cflags).
CXX20 = (19, 29)
X64 = ("x64", "amd64")


def _python_arch(facts: Facts) -> str:
    machine = (facts.python.machine or (facts.platform.machine if facts.platform else "") or "").lower()
    return "arm64" if machine in ("arm64", "aarch64") else "x64"


def _compiler_variable(win: WindowsInfo) -> Optional[str]:
    for name, value, problem in (("CC", win.cc, win.cc_problem), ("CXX", win.cxx, win.cxx_problem)):
        if problem == "a folder":
            return (f"{name}={value} is a folder, not a compiler: Triton runs it and Windows answers "
                    "\"[WinError 5] Access is denied\"")
        if problem in ("missing", "not on PATH"):
            return (f"{name}={value} names no compiler ({problem}): Triton's and Inductor's compiles run it "
                    "and fail (\"Failed to compile. cc_cmd\"), e.g. after Visual Studio was reinstalled")
    return None


def _wrong_arch(win: WindowsInfo, python: str) -> Optional[str]:
    target = (win.cl_target or win.vscmd_tgt_arch or "").lower()
    if target and (target in X64) != (python in X64):
        where = (f"the cl on PATH ({win.cl_on_path}) is Host{win.cl_host}\\{win.cl_target}" if win.cl_target
                 else f"the Developer Prompt targets {win.vscmd_tgt_arch} (VSCMD_ARG_TGT_ARCH)")
        return (f"{where}, but Python is {python}: the objects it makes cannot be linked into a {python} "
                "extension (LNK1112 / LNK4272 'machine type ... conflicts')")
    return None


def rule(facts: Facts) -> List[RuleOutcome]:
    win = windows_facts(facts, "MSVC's environment is Windows'")
    if isinstance(win, list):
        return win
    python = _python_arch(facts)
    bad = _compiler_variable(win) or _wrong_arch(win, python)
    if bad:
        return one(Status.AFFECTED, bad)
    installed = [t for t in win.toolsets if any(h.lower() == "hostx64/x64" for h in t.hosts)]
    tcc = ("; Triton's launchers fall back to its bundled TinyCC, which needs no MSVC but compiles C only"
           if win.tcc else "")
    if win.cl_on_path is None:
        if not installed:
            return one(Status.NOT_APPLICABLE, "no MSVC toolset is installed under Visual Studio: no "
                       f"compiler to activate (cxx-compiler-missing's case){tcc}")
        newest = installed[0]
        return one(Status.AFFECTED, f"MSVC {newest.version} is installed ({newest.root}) but not activated: "
                   "no cl on PATH, so Inductor's CPU kernels fail with \"Compiler: cl is not found\"" + tcc)
    if not (win.include_set and win.lib_set):
        return one(Status.AFFECTED, f"cl is on PATH ({win.cl_on_path}) but its environment is not activated "
                   "(INCLUDE/LIB unset, as when its folder is added to PATH by hand): it finds no standard "
                   "headers ('vcruntime.h', C1034)")
    version = cl_version(win.cl_version)
    label = f"cl {version[0]}.{version[1]}" if version else "cl"
    if version is not None and version < CXX20:
        return one(Status.LIKELY, f"{label} ({win.cl_on_path}) predates /std:c++20, which Inductor passes "
                   f"(cl 19.29 / VS 2019 16.11 is the first to take it)")
    where = f"Host{win.cl_host}\\{win.cl_target}" if win.cl_target else win.cl_on_path
    return one(Status.OK, f"{label} ({where}) is activated for {python}: INCLUDE and LIB set")
