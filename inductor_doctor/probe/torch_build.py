"""How torch was built, read from its own files: `version.py` as text, headers, libtorch's ELF.

Nothing here imports or executes torch, so a torch whose import fails (missing CUDA libraries, a
broken dependency) still gets its version, build, ABI flag and compiler reported.
"""

from __future__ import annotations

import ast
import os
import re
import threading
from typing import Any, Dict, List, Optional, Tuple

from inductor_doctor.core.facts import TorchInfo
from inductor_doctor.probe import _elf
from inductor_doctor.probe.step import Step

#: One c10 function that takes a `std::string const&`, in both libstdc++ ABIs. libc10 is small and
#: every torch release since 1.x exports it; which spelling is defined *is* the ABI torch was built
#: with — the same thing `torch._C._GLIBCXX_USE_CXX11_ABI` reports, without importing torch.
CXX11_ABI_PROBES: Tuple[Tuple[str, bool], ...] = (
    ("_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", True),
    ("_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", False),
    ("_ZN3c105ErrorC1ENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES5_PKv", True),
    ("_ZN3c105ErrorC1ESsSsPKv", False),
)

_ABI_FLAG = re.compile(r"_GLIBCXX_USE_CXX11_ABI=([01])")


def read_version_py(path: str) -> Dict[str, Any]:
    """The literal assignments of `torch/version.py`, parsed (never executed)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    out: Dict[str, Any] = {}
    for node in tree.body:
        target: Optional[ast.expr] = None
        value: Optional[ast.expr] = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def cxx11_abi_from_elf(libc10: str) -> Optional[bool]:
    from inductor_doctor.probe import _diskcache

    return _diskcache.of_file("cxx11-abi", libc10, _cxx11_abi_from_elf)


def _cxx11_abi_from_elf(libc10: str) -> Optional[bool]:
    with _elf.open_elf(libc10) as elf:
        index = _elf.SymbolIndex(elf)
        for name, flag in CXX11_ABI_PROBES:
            if index.defines(name):
                return flag
    return None


def cxx11_abi_from_cmake(torch_dir: str) -> Optional[bool]:
    """Older wheels write the flag into TorchConfig.cmake; newer ones dropped it (always 1)."""
    path = os.path.join(torch_dir, "share", "cmake", "Torch", "TorchConfig.cmake")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            m = _ABI_FLAG.search(f.read())
    except OSError:
        return None
    return m.group(1) == "1" if m else None


_abi_lock = threading.Lock()
_abi_cache: Dict[Tuple[str, float, int], Tuple[Optional[bool], str]] = {}


def cxx11_abi(torch_dir: str) -> Tuple[Optional[bool], str]:
    """torch's `_GLIBCXX_USE_CXX11_ABI` and where it came from; cached per libc10 file."""
    libc10 = os.path.join(torch_dir, "lib", "libc10.so")
    try:
        st = os.stat(libc10)
        key = (libc10, st.st_mtime, st.st_size)
    except OSError:
        key = None
    if key is not None:
        with _abi_lock:
            if key in _abi_cache:
                return _abi_cache[key]
        try:
            flag = cxx11_abi_from_elf(libc10)
        except _elf.ELF_ERRORS:
            flag = None
        if flag is not None:
            spelling = "std::__cxx11" if flag else "pre-C++11"
            answer = (flag, f"libc10.so exports the {spelling} spelling")
            with _abi_lock:
                _abi_cache[key] = answer
            return answer
    flag = cxx11_abi_from_cmake(torch_dir)
    if flag is not None:
        return flag, "TorchConfig.cmake"
    return None, "neither libc10.so's symbols nor TorchConfig.cmake tell the C++11 ABI flag"


def triton_requirement(requires: Optional[List[str]]) -> Optional[str]:
    """torch's Requires-Dist line for Triton (`triton==3.6.0; platform_system == "Linux"`)."""
    for line in requires or []:
        name = re.split(r"[\s;<>=!~\[(]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
        if name in ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu"):
            return line.strip()
    return None


def _specifier(requirement: str) -> Optional[str]:
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # pragma: no cover - packaging is a dependency
        return None
    try:
        return str(Requirement(requirement).specifier) or None
    except InvalidRequirement:
        return None


def torch_info(target: Dict[str, Any], packages: Dict[str, str]) -> Optional[TorchInfo]:
    """TorchInfo from the files of the torch the target would import; None when there is none."""
    modules = target.get("modules") or {}
    torch_dir = modules.get("torch")
    dist_version = packages.get("torch")
    if not torch_dir and not dist_version:
        return None
    info = TorchInfo(version=dist_version)
    if not torch_dir:
        info.notes.append(
            f"the torch distribution {dist_version} is installed but no `torch` package is importable"
        )
        return info
    info.path = torch_dir
    vpy = os.path.join(torch_dir, "version.py")
    try:
        v = read_version_py(vpy)
        info.version = v.get("__version__") or info.version
        info.cuda = v.get("cuda")
        info.hip = v.get("hip")
        info.git_version = v.get("git_version")
    except (OSError, SyntaxError, ValueError) as exc:
        info.notes.append(f"cannot read {vpy}: {exc}")
    if dist_version and info.version and dist_version.split("+")[0] != info.version.split("+")[0]:
        info.notes.append(
            f"torch/version.py says {info.version} but the installed distribution is {dist_version}"
            " (a partial or mixed install)"
        )
    inc = os.path.join(torch_dir, "include")
    if os.path.isdir(inc):
        info.include_dir = inc
    else:
        info.notes.append("torch ships no C++ headers (no include/)")
    lib = os.path.join(torch_dir, "lib")
    if os.path.isdir(lib):
        info.lib_dir = lib
        cpu = os.path.join(lib, "libtorch_cpu.so")
        if os.path.exists(cpu):
            info.libtorch_cpu = cpu
            try:
                comments = _elf.comment_strings(cpu)
                info.built_with = _elf.built_with(comments)
                if len(comments) > 1:
                    info.notes.append("libtorch_cpu.so .comment: " + "; ".join(comments[:6]))
            except _elf.ELF_ERRORS as exc:
                info.notes.append(f"cannot read {cpu} as ELF: {exc}")
        else:
            info.notes.append(f"no libtorch_cpu.so in {lib}")
        flag, how = cxx11_abi(torch_dir)
        info.cxx11_abi = flag
        info.notes.append(f"C++11 ABI flag: {how}")
    else:
        info.notes.append("torch has no lib/ directory")
    req = triton_requirement(target.get("torch_requires"))
    if req:
        info.triton_requirement = req
        info.triton_pin = _specifier(req)
    return info


#: torch as its files say (before the GPU catalog adds its arch list: the `torch` step).
STEP = Step("torch_files", ("target", "packages"), torch_info, what="torch")
