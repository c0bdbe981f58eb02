"""An Inductor or Triton cache directory (baked into an image, shared on NFS), read entry by entry.

Inductor's (`/tmp/torchinductor_<user>`, `TORCHINDUCTOR_CACHE_DIR`): compiled kernels as `.so`
files in two-letter folders, FX graph entries under `fxgraph/` (pickles whose repro header names
the torch that wrote them), AOTAutograd entries under `aotautograd/`. Triton's (`~/.triton/cache`,
`TRITON_CACHE_DIR`, or `triton/` inside Inductor's): one folder per kernel with its cubin and a JSON
of metadata whose `target` names the GPU architecture. A large cache is sampled within a time
budget, and says so.
"""

from __future__ import annotations

import json
import os
import time
from typing import Dict

from inductor_doctor.artifact.blob import _TORCH, _TORCH_GIT, compile_env, first
from inductor_doctor.artifact.elf import read_object
from inductor_doctor.core.artifact_facts import ArtifactFacts

BUDGET_S = 0.6
MAX_OBJECTS = 64
HEAD = 4 * 1024 * 1024


def read_cache_dir(path: str, facts: ArtifactFacts) -> None:
    start = time.monotonic()
    counts: Dict[str, int] = {}
    archs = set()
    complete = True
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if time.monotonic() - start > BUDGET_S:
            complete = False
            break
        rel = os.path.relpath(root, path)
        top = rel.split(os.sep)[0]
        for name in sorted(files):
            full = os.path.join(root, name)
            if name.endswith(".so") and len([o for o in facts.objects if o.kind == "so"]) < MAX_OBJECTS:
                counts["kernels"] = counts.get("kernels", 0) + 1
                try:
                    with open(full, "rb") as f:
                        facts.objects.append(
                            read_object(f, os.path.relpath(full, path), os.path.getsize(full))
                        )
                except OSError as exc:
                    facts.notes.append(f"{name}: {exc}")
            elif name.endswith(".so"):
                counts["kernels"] = counts.get("kernels", 0) + 1
            elif top in ("fxgraph", "aotautograd") and "." not in name:
                counts[top] = counts.get(top, 0) + 1
                if facts.torch_version is None or facts.torch_git is None or facts.compile_env is None:
                    _torch_of(full, facts, top)
            elif name.endswith(".json") and not name.startswith("__grp__"):
                arch = _triton_arch(full)
                if arch:
                    counts["triton"] = counts.get("triton", 0) + 1
                    archs.add(arch)
            elif name.endswith(".cubin"):
                counts["cubins"] = counts.get("cubins", 0) + 1
    facts.entries = counts
    if archs:
        facts.metadata["triton_targets"] = " ".join(sorted(archs))
        facts.device = "cuda" if any(a.startswith("sm_") for a in archs) else facts.device
        facts.sources["cuda_archs"] = "its Triton kernels' metadata (target)"
    if facts.device is None and counts.get("kernels"):
        facts.device = "cpu"
    if not complete:
        facts.notes.append(f"a large cache: only what {BUDGET_S:g}s could read was read")
    if not counts:
        facts.notes.append("no Inductor or Triton cache entry found in it")


def _torch_of(full: str, facts: ArtifactFacts, kind: str) -> None:
    try:
        with open(full, "rb") as f:
            head = f.read(HEAD)
    except OSError:
        return
    for attr, pattern in (("torch_version", _TORCH), ("torch_git", _TORCH_GIT)):
        value = first(pattern, head)
        if value and getattr(facts, attr) is None:
            setattr(facts, attr, value)
            facts.sources[attr] = f"its {kind} entries' repro header"
    if facts.compile_env is None:
        env = compile_env(head)
        if env is not None:
            facts.compile_env = env
            facts.sources["compile_env"] = f"its {kind} entries' repro header"


def _triton_arch(full: str) -> str:
    """`sm_90` from a Triton kernel's metadata (`"target": {"backend": "cuda", "arch": 90}`)."""
    try:
        if os.path.getsize(full) > 1024 * 1024:
            return ""
        with open(full, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return ""
    target = meta.get("target") if isinstance(meta, dict) else None
    if not isinstance(target, dict):
        return ""
    arch, backend = target.get("arch"), target.get("backend")
    if backend == "cuda" and isinstance(arch, int):
        return f"sm_{arch}"
    if arch:
        return f"{backend}:{arch}"
    return ""
