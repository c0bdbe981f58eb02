"""Whether what this torch writes into a compile cache survives several writers (cache-shared-writers).

torch 2.8 and 2.9 save a standalone compiled artifact (`torch._inductor.standalone_compile(...)
.save(path, format="binary")`, the format vLLM's compile cache keeps) with `open(path, "wb")`: the
file others load is truncated first and written after, so a writer that stops half-way (a full disk
or quota, a killed engine, a network file system showing a write under way) leaves a truncated
artifact behind, and every later load fails ("Bytes object is corrupted, checksum does not match").
From 2.10 it is `write_atomic` (pytorch/pytorch#162432): a temporary file renamed over the old one.
Which of the two this torch does is read from its `standalone_compile.py`, never remembered.

Where the writers are: vLLM's cache root (`VLLM_CACHE_ROOT`, else `<XDG_CACHE_HOME or ~/.cache>/vllm`,
as vllm/envs.py resolves it) and the file system it is on (a network file system is shared by every
host that mounts it), and the processes a launcher started here (`LOCAL_WORLD_SIZE`).
"""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional

from inductor_doctor.core.facts import SharedCacheInfo, TorchInfo
from inductor_doctor.probe.caches import probe_dir, read_mounts
from inductor_doctor.probe.step import Step

ARTIFACT_FILE = os.path.join("_inductor", "standalone_compile.py")
_SAVE = re.compile(r"def save\(")
_ATOMIC = re.compile(r"write_atomic\(\s*path\b")
_IN_PLACE = re.compile(r"open\(\s*path\s*,\s*[\"']wb[\"']\s*\)")


def artifact_save(torch_dir: str) -> tuple:
    """("atomic" | "in-place" | None, "file:line") for this torch's CompiledArtifact.save."""
    path = os.path.join(torch_dir, ARTIFACT_FILE)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None, None
    first_save = _SAVE.search(text)
    if first_save is None:
        return None, None
    body = text[first_save.start():]
    for kind, pattern in (("atomic", _ATOMIC), ("in-place", _IN_PLACE)):
        m = pattern.search(body)
        if m:
            line = text.count("\n", 0, first_save.start() + m.start()) + 1
            return kind, f"torch/_inductor/standalone_compile.py:{line}"
    return None, None


def vllm_cache_root(env: Mapping[str, str]) -> tuple:
    """(path, what chose it), as vllm/envs.py resolves VLLM_CACHE_ROOT."""
    if env.get("VLLM_CACHE_ROOT"):
        return os.path.expanduser(env["VLLM_CACHE_ROOT"]), "VLLM_CACHE_ROOT"
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vllm"), "default (<XDG_CACHE_HOME or ~/.cache>/vllm)"


def gather(torch: Optional[TorchInfo], packages: Mapping[str, str],
           env: Mapping[str, str]) -> SharedCacheInfo:
    info = SharedCacheInfo()
    if torch is not None and torch.path:
        info.artifact_save, info.artifact_save_source = artifact_save(torch.path)
    info.vllm = packages.get("vllm")
    if info.vllm:
        path, source = vllm_cache_root(env)
        info.vllm_cache = probe_dir("vllm", path, source, read_mounts())
        if env.get("VLLM_DISABLE_COMPILE_CACHE") not in (None, "", "0", "false", "False"):
            info.vllm_cache_off = f"VLLM_DISABLE_COMPILE_CACHE={env['VLLM_DISABLE_COMPILE_CACHE']}"
    try:
        info.local_processes = int(env["LOCAL_WORLD_SIZE"]) if env.get("LOCAL_WORLD_SIZE") else None
    except ValueError:
        info.local_processes = None
    return info


STEP = Step("shared_caches", ("torch", "packages", "environ"), gather, what="shared caches")
