"""Does this ptxas know this GPU? Ask it: `ptxas --gpu-name sm_XX` on an empty PTX module.

Reading the executable's strings is not enough: CUDA 13's ptxas carries the text "sm_70" yet
answers `Value 'sm_70' is not defined for option 'gpu-name'` (13.0 dropped Volta, and sm_101
became sm_110). The module has no kernel, so ptxas only checks its options and the PTX header
(`.version 6.0`, read by every CUDA 12 and 13 ptxas; `.target sm_50`, below every GPU asked
about, which ptxas allows): a few milliseconds per run. The answer depends only on the binary,
so it is kept per (path, size, mtime, gpu name) in the probe's disk cache; a failure to run is
never stored.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.facts import GPUInfo, PtxasInfo, TritonInfo
from inductor_doctor.probe import _diskcache
from inductor_doctor.probe._proc import c_locale_env, run
from inductor_doctor.probe.step import Step

TIMEOUT_S = 10.0
MINIMAL_PTX = ".version 6.0\n.target sm_50\n.address_size 64\n"
_UNKNOWN_ARCH = re.compile(r"Value '[^']*' is not defined for option 'gpu-name'")

_memo: Dict[Tuple[object, str], Optional[bool]] = {}
_lock = threading.Lock()


def accepts(path: Optional[str], gpu_name: str, timeout_s: float = TIMEOUT_S) -> Optional[bool]:
    """True: it assembles for `gpu_name` ("sm_90a"); False: it does not know that GPU; None: it
    could not be asked (missing, not executable here, timed out, or failed for another reason)."""
    key = _diskcache.file_key(path)
    if key is None or path is None or not os.access(path, os.X_OK):
        return None
    memo_key = (tuple(key), gpu_name)
    with _lock:
        if memo_key in _memo:
            return _memo[memo_key]
    stored = _diskcache.get("ptxas-arch", [key, gpu_name])
    if stored is not None and isinstance(stored.get("accepts"), bool):
        answer: Optional[bool] = stored["accepts"]
    else:
        answer = _ask(path, gpu_name, timeout_s)
        if answer is not None:
            _diskcache.put("ptxas-arch", [key, gpu_name], {"accepts": answer})
    with _lock:
        _memo[memo_key] = answer
    return answer


def _ask(path: str, gpu_name: str, timeout_s: float) -> Optional[bool]:
    with tempfile.TemporaryDirectory(prefix="inductor-doctor-ptxas-") as tmp:
        ptx = os.path.join(tmp, "empty.ptx")
        with open(ptx, "w", encoding="ascii") as f:
            f.write(MINIMAL_PTX)
        res = run([path, "--gpu-name", gpu_name, ptx, "-o", os.path.join(tmp, "empty.cubin")],
                  timeout_s=timeout_s, env=c_locale_env())
    if res.ok:
        return True
    if res.error is None and not res.timed_out and _UNKNOWN_ARCH.search(res.stderr + res.stdout):
        return False
    return None


_RELEASE = re.compile(rb"Cuda compilation tools, release (\d+\.\d+)")
#: The variables through which a user points Triton at another ptxas (3.3 spelled one with a hyphen).
OVERRIDES = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_PTXAS-BLACKWELL_PATH")


def release_of(path: Optional[str]) -> Optional[str]:
    """The CUDA release a ptxas executable reports in `--version`, read from its bytes once and kept
    under the file's (path, size, mtime): reading 30-40 MB of ptxas took 60 ms of every check on a
    GPU host, after nvidia-smi, on the probe's longest path."""
    key = _diskcache.file_key(path)
    if key is None or path is None:
        return None
    stored = _diskcache.get("ptxas-release", key)
    if stored is not None and isinstance(stored.get("release"), str):
        return str(stored["release"])
    release = _read_release(path)
    if release is not None:
        _diskcache.put("ptxas-release", key, {"release": release})
    return release


def _read_release(path: str, chunk: int = 1 << 20) -> Optional[str]:
    carry = b""
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(chunk)
                if not block:
                    return None
                data = carry + block
                m = _RELEASE.search(data)
                if m:
                    return m.group(1).decode()
                carry = data[-64:]
    except OSError:
        return None


def candidates(triton: Optional[TritonInfo], env: Mapping[str, str]) -> List[Tuple[str, str]]:
    """(path, source) of every ptxas Triton may run here: its bundled ones and the overrides."""
    found: List[Tuple[str, str]] = []
    if triton is not None and triton.path:
        for name in ("ptxas", "ptxas-blackwell"):
            for base in (("backends", "nvidia", "bin"), ("third_party", "cuda", "bin")):
                path = os.path.join(triton.path, *base, name)
                if os.path.isfile(path):
                    found.append((path, f"bundled {name}"))
                    break
    for var in OVERRIDES:
        value = env.get(var)
        if value and os.path.isfile(value):
            found.append((value, var))
    return found


def gpu_names(gpus: Sequence[GPUInfo]) -> List[str]:
    """The `--gpu-name` values Triton may pass for these GPUs: `sm_90` and, from sm_90, `sm_90a`."""
    names: List[str] = []
    for g in gpus:
        try:
            major, minor = (g.sm or "").split(".")[:2]
            arch = int(major) * 10 + int(minor)
        except ValueError:
            continue
        for name in (f"sm_{arch}", f"sm_{arch}a" if arch >= 90 else ""):
            if name and name not in names:
                names.append(name)
    return names


def gather(triton: Optional[TritonInfo], env: Mapping[str, str], gpus: Sequence[GPUInfo]) -> List[PtxasInfo]:
    """Every ptxas Triton may run, with its release and whether it assembles for each GPU here."""
    found = candidates(triton, env)
    names = gpu_names(gpus)
    if not found:
        return []
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="indoc-ptxas") as ex:
        asked = {(path, n): ex.submit(accepts, path, n) for path, _ in found for n in names}
        out = []
        for path, source in found:
            answers = {n: asked[(path, n)].result() for n in names}
            out.append(PtxasInfo(path, source, release_of(path),
                                 {n: a for n, a in answers.items() if a is not None}))
    return out


#: Every ptxas Triton may run, asked about the GPUs torch will see.
STEP = Step("ptxas_binaries", ("triton", "environ", "catalog"),
            lambda tr, env, catalog: gather(tr, env, catalog[0].gpus), lambda m, known: [], "Triton's ptxas")
