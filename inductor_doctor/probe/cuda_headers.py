"""nvcc and the CUDA headers its compiles find: nvcc-headers-skew.

nvcc generates host stubs that call macros of its own release's `crt/host_runtime.h`: CUDA 13
changed `__cudaLaunch(fun)` to `__cudaLaunch(fun, isTileKernel)`. A compile whose `-I` options put
another release's `crt/` first (a pip `nvidia-cuda-nvcc-cu12` include directory in NVCC_PREPEND_FLAGS or
a build's flags, a conda prefix mixing cuda-nvcc and cuda-cudart-dev releases, CUDA_HOME pointing at
another toolkit than the nvcc that runs) fails in the generated `*.cudafe1.stub.c`:
"macro "__cudaLaunch" passed 2 arguments, but takes just 1". Reproduced with nvcc 13.0 and CUDA
12.4's headers.

For nvcc (CUDA_HOME/bin/nvcc, as torch's cpp_extension runs it) and each directory a compile searches
before nvcc's own (nvcc puts `-I` options before its own include directory: those in
NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, and CUDA_HOME/include, which torch's extension builds pass;
CPATH and its kin come after every `-I`, so they cannot shadow nvcc's headers), this reads two lines
of text: CUDART_VERSION in cuda_runtime_api.h and the `__cudaLaunch` macro's parameters.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any, Dict, List, Optional

from inductor_doctor.core.facts import CudaHeaderDir, CudaHeadersInfo, CudaToolkitInfo
from inductor_doctor.probe import Step

_CUDART = re.compile(rb"#define\s+CUDART_VERSION\s+(\d+)")
_LAUNCH = re.compile(rb"#define\s+__cudaLaunch\(([^)]*)\)")


def read_dir(path: str, source: str) -> Optional[CudaHeaderDir]:
    """The CUDA headers in `path`, or None when it holds none of them."""
    runtime, launch = None, None
    try:
        with open(os.path.join(path, "cuda_runtime_api.h"), "rb") as f:
            m = _CUDART.search(f.read(16384))
        if m:
            v = int(m.group(1))
            runtime = f"{v // 1000}.{v % 1000 // 10}"
    except OSError:
        pass
    try:
        with open(os.path.join(path, "crt", "host_runtime.h"), "rb") as f:
            m = _LAUNCH.search(f.read())
        if m:
            launch = len([a for a in m.group(1).split(b",") if a.strip()])
    except OSError:
        pass
    if runtime is None and launch is None:
        return None
    return CudaHeaderDir(path=os.path.realpath(path), source=source, runtime=runtime, launch_args=launch)


_INCLUDES = re.compile(r'^#\$ INCLUDES="-I([^"]+)"', re.M)


def _own_include(nvcc: str) -> Optional[str]:
    """nvcc's own include directory, as nvcc itself says (`--dryrun`: a wrapper script may stand
    in for it), kept under the binary's (path, size, mtime)."""
    from inductor_doctor.probe import _diskcache
    from inductor_doctor.probe._proc import c_locale_env, run

    def ask(path: str) -> Optional[str]:
        res = run([path, "--dryrun", "-E", "-x", "cu", os.devnull], timeout_s=20, env=c_locale_env())
        m = _INCLUDES.search(res.stdout + res.stderr)
        return os.path.normpath(m.group(1)) if m else None

    return _diskcache.of_file("nvcc-include", nvcc, ask)


def read(toolkit: Optional[CudaToolkitInfo], env: Dict[str, str]) -> Optional[CudaHeadersInfo]:
    if toolkit is None or not toolkit.nvcc or not os.path.isfile(toolkit.nvcc):
        return None
    info = CudaHeadersInfo(nvcc=toolkit.nvcc, nvcc_version=toolkit.nvcc_version)
    own = _own_include(toolkit.nvcc)
    seen = set()
    candidates: List[tuple] = [(own, "nvcc's own")] if own else []
    for name in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"):
        try:
            words = shlex.split(env.get(name, ""))
        except ValueError:
            words = []
        for i, w in enumerate(words):
            if w == "-I" and i + 1 < len(words):
                candidates.append((words[i + 1], name))
            elif w.startswith("-I") and len(w) > 2:
                candidates.append((w[2:], name))
    if toolkit.cuda_home:
        candidates.append((os.path.join(toolkit.cuda_home, "include"), "CUDA_HOME"))
    for path, source in candidates:
        real = os.path.realpath(path)
        if real in seen or not os.path.isdir(real):
            continue
        seen.add(real)
        found = read_dir(real, source)
        if found is not None:
            info.dirs.append(found)
    return info


def _fallback(message: str, known: Dict[str, Any]) -> None:
    return None


STEP = Step("cuda_headers", ("toolkit", "environ"), read, _fallback, "CUDA headers")
