"""Compiled artifacts (`check --artifact`, `plan --artifact`): what each was built for, read from it.

One reader per kind, behind `read_artifact(path)`: `pt2.py` (an AOTInductor package), `blob.py`
(a `torch.compiler.save_cache_artifacts()` blob), `cache_dir.py` (an Inductor or Triton cache
directory); `elf.py` reads their `.so` files and cubins for all three. Nothing here imports torch or
runs anything: the readers open files, and read only the metadata and ELF sections that decide a
load. `host.py` holds the host's side of the comparison (what its libtorch exports, its CPU's flags).
"""

from __future__ import annotations

import os
import time

from inductor_doctor.core.artifact_facts import ArtifactFacts

KINDS = ("pt2", "cache-blob", "cache-dir")


def kind_of(path: str) -> str:
    """Which reader: a directory is a cache; a zip is a package; a file starting with the blob's
    CRC and encoding version (torch 2.8+), or with the encoding version alone (2.7), is a blob."""
    if os.path.isdir(path):
        return "cache-dir"
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return "unknown"
    if head[:4] == b"PK\x03\x04":
        return "pt2"
    if len(head) == 12 and (int.from_bytes(head[4:12], "big") < 1000 or int.from_bytes(head[:8], "big") == 1):
        return "cache-blob"
    return "unknown"


def read_artifact(path: str) -> ArtifactFacts:
    """An artifact's build facts; an unreadable one has `error` set, never raises."""
    start = time.monotonic()
    facts = ArtifactFacts(path=os.path.abspath(path), kind=kind_of(path))
    try:
        facts.size = os.path.getsize(path) if not os.path.isdir(path) else 0
        if not os.path.exists(path):
            facts.error = "no such file or directory"
        elif facts.kind == "pt2":
            from inductor_doctor.artifact.pt2 import read_pt2

            read_pt2(path, facts)
        elif facts.kind == "cache-blob":
            from inductor_doctor.artifact.blob import read_blob

            read_blob(path, facts)
        elif facts.kind == "cache-dir":
            from inductor_doctor.artifact.cache_dir import read_cache_dir

            read_cache_dir(path, facts)
        else:
            facts.error = (
                "not an artifact this doctor reads: an AOTInductor package (.pt2), a "
                "save_cache_artifacts() blob, or an Inductor/Triton cache directory"
            )
    except OSError as exc:
        facts.error = f"could not read it: {exc.strerror or exc}"
    facts.read_s = time.monotonic() - start
    return facts
