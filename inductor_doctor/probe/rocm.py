"""ROCm's toolchain where a ROCm torch and Triton's AMD backend look for it, read from files.

pip and TheRock install ROCm into site-packages (`_rocm_sdk_core`, `_rocm_sdk_devel`), with no
`/opt/rocm`. Two lookups then miss it, each written in the installed release's own source, which
this module reads rather than remembers:

* Triton's AMD backend (`triton/backends/amd/compiler.py`, `HIPBackend.path_to_rocm_lld`, Triton
  3.1-3.4 and the pytorch-triton-rocm builds of them) links every kernel with an `ld.lld` it looks
  for in a fixed order: `TRITON_HIP_LLD_PATH`, `<backend>/llvm/bin/ld.lld`, `/opt/rocm/llvm/bin/
  ld.lld`, `/usr/bin/ld.lld` (backports add `ROCM_PATH`, `rocm-sdk path --root` and PATH), else
  "ROCm linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path." From
  Triton 3.5 the backend links in process (`amd.link_hsaco`) and needs no ld.lld. `lld_search`
  reads that order out of the function's source.
* torch's `_find_rocm_home` (`torch/utils/cpp_extension.py`), whose `include/hip/hip_runtime.h`
  AOTInductor and C++ extensions compile against: `ROCM_HOME`/`ROCM_PATH`, TheRock's
  `_rocm_sdk_core` (torch 2.13+), the directory above `hipcc` on PATH (a venv's `bin/hipcc`
  wrapper gives the venv's root, pytorch#180211), `/opt/rocm`.

Every function takes the environment and directories it reads (a directory laid out like pip's
rocm-sdk is enough to test it); a few stats and two source files read: milliseconds.
"""

from __future__ import annotations

import os
import re
from typing import List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.facts import RocmInfo, TorchInfo, TritonInfo

OPT_ROCM = "/opt/rocm"
SDK_PACKAGES = ("_rocm_sdk_devel", "_rocm_sdk_core")
#: Where an ld.lld sits below a ROCm root: /opt/rocm/llvm -> lib/llvm, TheRock's lib/llvm.
LLD_BELOW_ROOT = ("llvm/bin/ld.lld", "lib/llvm/bin/ld.lld")

#: How each lookup `path_to_rocm_lld` makes is written in the releases, and what it names.
_LOOKUPS: Sequence[Tuple[str, str]] = (
    (r'TRITON_HIP_LLD_PATH|knobs\.amd\.lld_path', "$TRITON_HIP_LLD_PATH"),
    (r'Path\(__file__\)\.parent\s*/\s*"llvm/bin/ld\.lld"', "<backend>/llvm/bin/ld.lld"),
    (r'ROCM_PATH', "$ROCM_PATH/llvm/bin/ld.lld"),
    (r'rocm-sdk', "$(rocm-sdk path --root)/llvm/bin/ld.lld"),
    (r'Path\("(?P<literal>/[^"]*ld\.lld)"\)', ""),
    (r'which\(\s*"ld\.lld"\s*\)', "ld.lld on PATH"),
)


def lld_search(source: str) -> Tuple[List[str], Optional[bool]]:
    """(the ld.lld lookups of `path_to_rocm_lld` in the order it makes them, whether the backend links
    in process instead). A source with neither says ([], None)."""
    body = re.search(r"def path_to_rocm_lld\(.*?\):\n(?P<body>(?:[ \t]+[^\n]*\n|\n)+)", source)
    if body is None:
        return [], (True if "link_hsaco" in source else None)
    found: List[str] = []
    for line in body.group("body").splitlines():
        for pattern, name in _LOOKUPS:
            m = re.search(pattern, line)
            if m is None:
                continue
            what = name or m.group("literal")
            if what not in found:
                found.append(what)
    return found, False


def sdk_roots(site_packages: Sequence[str]) -> List[str]:
    """TheRock's ROCm packages in site-packages, devel (the fuller tree, once `rocm-sdk init` has
    expanded it) first."""
    out: List[str] = []
    for name in SDK_PACKAGES:
        for site in site_packages:
            path = os.path.join(site, name)
            if os.path.isdir(path) and path not in out:
                out.append(path)
    return out


def resolve_lld(search: Sequence[str], environ: Mapping[str, str], backend_dir: Optional[str],
                roots: Sequence[str]) -> Optional[str]:
    """The ld.lld Triton's lookups find, as they make them; None: none."""
    for lookup in search:
        for candidate in _candidates(lookup, environ, backend_dir, roots):
            if candidate and os.path.isfile(candidate):
                return candidate
    return None


def _candidates(lookup: str, environ: Mapping[str, str], backend_dir: Optional[str],
                roots: Sequence[str]) -> List[str]:
    if lookup == "$TRITON_HIP_LLD_PATH":
        return [environ.get("TRITON_HIP_LLD_PATH") or ""]
    if lookup == "<backend>/llvm/bin/ld.lld":
        return [os.path.join(backend_dir, "llvm", "bin", "ld.lld")] if backend_dir else []
    if lookup.startswith("$ROCM_PATH"):
        root = environ.get("ROCM_PATH")
        return [os.path.join(root, p) for p in LLD_BELOW_ROOT] if root else []
    if lookup.startswith("$(rocm-sdk"):
        return [os.path.join(r, p) for r in roots[:1] for p in LLD_BELOW_ROOT]
    if lookup == "ld.lld on PATH":
        return [os.path.join(d, "ld.lld") for d in (environ.get("PATH") or "").split(os.pathsep) if d]
    return [lookup]


#: The math libraries' development headers, one standing for all (hipBLAS): TheRock ships them in its
#: devel package, apart from the core that hipcc and the HIP runtime come in.
MATH_HEADER = ("include", "hipblas", "hipblas.h")


def lld_elsewhere(environ: Mapping[str, str], roots: Sequence[str], opt_rocm: str) -> List[str]:
    """ld.lld files a ROCm install holds wherever they are: what to point TRITON_HIP_LLD_PATH at."""
    bases = [*roots, *(p for p in (environ.get("ROCM_PATH"), environ.get("HIP_PATH"), opt_rocm) if p)]
    out: List[str] = []
    for base in bases:
        for below in LLD_BELOW_ROOT:
            path = os.path.join(base, below)
            if os.path.isfile(path) and os.path.realpath(path) not in map(os.path.realpath, out):
                out.append(path)
    return out


def torch_knows_sdk(torch_path: Optional[str]) -> Optional[bool]:
    """Whether this torch's `_find_rocm_home` looks for TheRock's `_rocm_sdk_core` (torch 2.13+)."""
    if not torch_path:
        return None
    try:
        with open(os.path.join(torch_path, "utils", "cpp_extension.py"), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    start = text.find("def _find_rocm_home")
    if start < 0:
        return None
    end = text.find("\ndef ", start + 1)
    return "_rocm_sdk_core" in text[start:end if end > 0 else None]


def find_rocm_home(environ: Mapping[str, str], knows_sdk: Optional[bool], roots: Sequence[str],
                   opt_rocm: str) -> Tuple[Optional[str], Optional[str]]:
    """(ROCM_HOME, how) as this torch's `_find_rocm_home` finds it, in its order."""
    explicit = environ.get("ROCM_HOME") or environ.get("ROCM_PATH")
    if explicit:
        return explicit, "ROCM_HOME" if environ.get("ROCM_HOME") else "ROCM_PATH"
    core = [r for r in roots if r.endswith("_rocm_sdk_core")]
    if knows_sdk and core:
        return os.path.realpath(core[0]), "TheRock's _rocm_sdk_core"
    for folder in (environ.get("PATH") or "").split(os.pathsep):
        hipcc = os.path.join(folder, "hipcc")
        if folder and os.path.isfile(hipcc):
            home = os.path.dirname(os.path.dirname(os.path.realpath(hipcc)))
            if os.path.basename(home) == "hip":
                home = os.path.dirname(home)
            return home, f"the folder above {hipcc}"
    if os.path.exists(opt_rocm):
        return opt_rocm, opt_rocm
    return None, None


def is_rocm_torch(torch: Optional[TorchInfo]) -> bool:
    version = (torch.version or "") if torch is not None else ""
    return torch is not None and bool(torch.hip or "+rocm" in version)


def gather_rocm(environ: Mapping[str, str], torch: Optional[TorchInfo], triton: Optional[TritonInfo],
                site_packages: Sequence[str], opt_rocm: str = OPT_ROCM) -> RocmInfo:
    info = RocmInfo(rocm_path=environ.get("ROCM_PATH") or None,
                    rocm_home_env=environ.get("ROCM_HOME") or None,
                    lld_env=environ.get("TRITON_HIP_LLD_PATH") or None, opt_rocm=os.path.isdir(opt_rocm))
    info.sdk_roots = sdk_roots(site_packages)
    backend = os.path.join(triton.path, "backends", "amd") if triton is not None and triton.path else None
    source_path = os.path.join(backend, "compiler.py") if backend else None
    source = _read(source_path)
    if source is None:
        if backend:
            info.notes.append(f"no AMD backend in the installed Triton ({source_path})")
    else:
        info.backend_source = source_path
        info.lld_search, info.links_in_process = lld_search(source)
        info.lld = resolve_lld(info.lld_search, environ, backend, info.sdk_roots)
    info.lld_elsewhere = [p for p in lld_elsewhere(environ, info.sdk_roots, opt_rocm) if p != info.lld]
    info.torch_knows_sdk = torch_knows_sdk(torch.path if torch else None)
    info.rocm_home, info.rocm_home_how = find_rocm_home(environ, info.torch_knows_sdk, info.sdk_roots,
                                                        opt_rocm)
    if info.rocm_home:
        header = os.path.join(info.rocm_home, "include", "hip", "hip_runtime.h")
        info.hip_runtime_h = header if os.path.isfile(header) else None
    if info.rocm_home:
        header = os.path.join(info.rocm_home, *MATH_HEADER)
        info.hipblas_h = header if os.path.isfile(header) else None
    for root in info.sdk_roots + ([opt_rocm] if info.opt_rocm else []):
        header = os.path.join(root, "include", "hip", "hip_runtime.h")
        if os.path.isfile(header) and header != info.hip_runtime_h:
            info.hip_headers_elsewhere.append(header)
        header = os.path.join(root, *MATH_HEADER)
        if os.path.isfile(header) and header != info.hipblas_h:
            info.math_headers_elsewhere.append(header)
    return info


def _read(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None
