"""What a CompilerBisector left in the Inductor cache directory.

`python -m torch._inductor.compiler_bisector start` (or `run`, interrupted) writes
`<inductor cache>/bisect/bisect_status.txt` naming the backend under test (`backend=eager`) and the
subsystem it disables; only `end`, or a bisection that finishes, deletes it. From torch 2.6 on,
`torch.compile` takes its backend from that file on every call (torch/__init__.py:
`if bisect_backend := CompilerBisector.get_backend(): backend = bisect_backend`), so a leftover
silently makes every later compile eager (pytorch/pytorch#143453). The directory's and file's names
are the installed release's (core/source_history.py, read from each release's compiler_bisector.py).
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional

from inductor_doctor.core import source_history as history
from inductor_doctor.core.facts import BisectState, CacheInfo, TorchInfo
from inductor_doctor.probe import Step

DEFAULT = {"subdir": "bisect", "status_file": "bisect_status.txt"}


def read(caches: Optional[CacheInfo], torch: Optional[TorchInfo]) -> Optional[BisectState]:
    if torch is None or caches is None:
        return None
    inductor = next((d for d in caches.dirs if d.name == "inductor"), None)
    if inductor is None:
        return None
    known = history.bisector(history.release_of(torch.version)) or DEFAULT
    directory = os.path.join(inductor.path, known.get("subdir") or DEFAULT["subdir"])
    state = BisectState(directory=directory, exists=os.path.isdir(directory))
    if not state.exists:
        return state
    path = os.path.join(directory, known.get("status_file") or DEFAULT["status_file"])
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(64 * 1024).splitlines()
        mtime = os.stat(path).st_mtime
    except OSError:
        return state
    state.status_file = path
    state.modified = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))
    for line in lines:
        key, _, value = line.strip().partition("=")
        if key == "backend":
            state.backend = value or None
        elif key == "subsystem":
            state.subsystem = value or None
    return state


def _fallback(message: str, known: Dict[str, Any]) -> None:
    return None


STEP = Step("bisect_state", ("caches", "torch_files"), read, _fallback, "bisector state")
