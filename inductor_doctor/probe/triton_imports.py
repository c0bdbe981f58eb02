"""The imports of Triton's API in installed packages, checked against the installed Triton.

Libraries with Triton kernels of their own (bitsandbytes, unsloth, flash-attn, xformers,
SageAttention, vLLM, ...) import Triton's internals, which Triton moves and removes between
releases: bitsandbytes before 0.45 imports `triton.ops.matmul_perf_model`, which Triton 3.2 removed,
so `import bitsandbytes` fails with "No module named 'triton.ops'". The installed packages that use
Triton (the ones whose metadata requires it, and the known users of its API below) are read with
`ast`, never imported; each `from triton.X import Y` and `import triton.X` is looked up in the
installed Triton's own files: a module it does not have, or a name its module does not define
(`probe/_pysource.py`: what `from X import Y` can find), is a missing import.

Cost: only the files of those packages that contain "triton" are parsed; what a package imports
is kept under its RECORD's (path, size, mtime), and the verdict under that and the Triton files
looked at, so a repeated check reads a few records.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from inductor_doctor.core.facts import TritonImport, TritonImportScan, TritonInfo
from inductor_doctor.core.files import file_key
from inductor_doctor.probe import Step, _diskcache
from inductor_doctor.probe._pysource import imports_from, module_names
from inductor_doctor.probe.packages import TRITON_DISTRIBUTIONS, normalize

#: Packages that import Triton's API without declaring a dependency on it (torch brings Triton).
KNOWN_USERS = frozenset({
    "bitsandbytes", "unsloth", "unsloth-zoo", "flash-attn", "xformers", "sageattention", "vllm",
    "liger-kernel", "flash-linear-attention", "fla-core", "torchao", "deepspeed", "lmdeploy", "sglang",
    "auto-gptq", "gptqmodel", "mamba-ssm", "causal-conv1d", "bitblas", "triton-kernels", "kernels",
})  # fmt: skip
#: torch's own imports are triton-version-skew's; Triton's own are Triton's.
SKIP = frozenset({"torch", *TRITON_DISTRIBUTIONS})
FORM = "triton-imports/1"
MAX_FILE = 2 * 1024 * 1024


def scan(target: Dict[str, Any], triton: Optional[TritonInfo], budget_s: float) -> Optional[TritonImportScan]:
    if triton is None or not triton.path or not os.path.isdir(triton.path):
        return None
    deadline = time.monotonic() + budget_s
    out = TritonImportScan()
    here = _Triton(triton.path)
    seen: Set[str] = set()
    for folder in [p for p in target.get("sys_path") or [] if isinstance(p, str) and os.path.isdir(p)]:
        for dist, version, info in _users(folder, seen):
            if time.monotonic() > deadline:
                out.complete = False
                return out
            found = _imports(folder, info)
            out.packages.append(f"{dist} {version}")
            out.imports += len(found)
            for rel, line, module, name in found:
                if not here.has(module, name):
                    out.missing.append(TritonImport(dist, version, rel, line, module, name))
    return out


def _users(folder: str, seen: Set[str]) -> List[Tuple[str, str, str]]:
    """(name, version, dist-info) of the packages in `folder` that use Triton's API and that an earlier
    folder did not have (`seen` gains every package here), kept under the folder's mtime."""
    try:
        infos = sorted(n for n in os.listdir(folder) if n.endswith(".dist-info"))
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return []
    fresh = []
    for info in infos:
        parts = info[: -len(".dist-info")].split("-")
        if len(parts) == 2 and normalize(parts[0]) not in seen:
            seen.add(normalize(parts[0]))
            fresh.append((normalize(parts[0]), parts[1], info))
    key = [FORM, os.path.realpath(folder), mtime, [i for _, _, i in fresh]]
    kept = _diskcache.get("triton-users", key)
    if kept is not None and isinstance(kept.get("value"), list):
        return [tuple(x) for x in kept["value"]]  # type: ignore[misc]
    users = [(d, v, os.path.join(folder, i)) for d, v, i in fresh
             if d not in SKIP and (d in KNOWN_USERS or _requires_triton(os.path.join(folder, i)))]
    _diskcache.put("triton-users", key, {"value": users})
    return users


def _requires_triton(dist_info: str) -> bool:
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    return False
                if line.lower().startswith("requires-dist:") and normalize(
                        line.split(":", 1)[1].strip().split()[0].split(";")[0].split("=")[0].split(">")[0]
                        .split("<")[0].split("[")[0].split("(")[0]) in TRITON_DISTRIBUTIONS:
                    return True
    except OSError:
        pass
    return False


def _imports(folder: str, dist_info: str) -> List[Tuple[str, int, str, Optional[str]]]:
    """(file, line, module, name) of each Triton import in a package's own .py files, kept under its
    RECORD's key."""
    record = os.path.join(dist_info, "RECORD")
    key = [FORM, file_key(record)]
    kept = _diskcache.get("triton-imports", key)
    if kept is not None and isinstance(kept.get("value"), list):
        return [tuple(x) for x in kept["value"]]  # type: ignore[misc]
    out: List[Tuple[str, int, str, Optional[str]]] = []
    try:
        with open(record, encoding="utf-8", errors="replace") as f:
            files = [line.split(",", 1)[0] for line in f if line.split(",", 1)[0].endswith(".py")]
    except OSError:
        files = []
    for rel in files:
        path = os.path.normpath(os.path.join(folder, rel))
        try:
            if os.path.getsize(path) > MAX_FILE:
                continue
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"triton" not in data:
            continue
        text = data.decode("utf-8", "replace")
        out.extend((rel, line, module, name) for module, name, line in imports_from(text, "triton"))
    if key[1] is not None:
        _diskcache.put("triton-imports", key, {"value": out})
    return out


class _Triton:
    """What the installed Triton can give an import: its modules and the names each defines."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._names: Dict[str, Optional[Set[str]]] = {}

    def _file(self, module: str) -> Optional[str]:
        rel = module.split(".")[1:]
        base = os.path.join(self.path, *rel)
        for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
            if os.path.isfile(candidate):
                return candidate
        return None

    def has(self, module: str, name: Optional[str]) -> bool:
        if self._file(module) is None:
            return os.path.isdir(os.path.join(self.path, *module.split(".")[1:]))  # a namespace package
        if name is None:
            return True
        if self._file(f"{module}.{name}") is not None:  # `from triton.language import extra`
            return True
        if module not in self._names:
            try:
                with open(self._file(module) or "", encoding="utf-8", errors="replace") as f:
                    self._names[module] = module_names(f.read())
            except (OSError, ValueError):
                self._names[module] = None
        names = self._names[module]
        return names is None or name in names or "*" in names  # unreadable or open: not claimed missing


STEP = Step("triton_imports", ("target", "triton_installed", "step"), scan,
            lambda m, known: TritonImportScan(complete=False, notes=[m]), "Triton imports")
