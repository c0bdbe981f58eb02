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
from typing import Dict, Optional, Tuple

from inductor_doctor.probe import _diskcache
from inductor_doctor.probe._proc import c_locale_env, run

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
