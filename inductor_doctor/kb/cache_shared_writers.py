"""A compile cache shared by several writers, with a torch that saves its compiled artifacts in place.

Reproduced with torch 2.9.0 and 2.13.0 (tests/known_issues/test_cache_shared_writers.py, `-m heavy`):
one process saves a standalone compiled artifact, a second saves it again to the same path and stops
half-way (its file-size limit, as a full disk or quota does); torch 2.9.0 leaves the truncated file
and the next `CompiledArtifact.load` raises "Bytes object is corrupted, checksum does not match";
torch 2.13.0 leaves its temporary file beside an intact artifact, which loads. How this torch saves is
read from its own `standalone_compile.py` (probe/shared_caches.py); who writes there, from vLLM's
cache root and the file system it is on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts
    from inductor_doctor.core.plan_input import PlanInput

#: File systems several hosts mount at once (a fuse mount, `fuse.*`, too: sshfs, s3fs, gcsfuse, juicefs).
SHARED_FS = ("nfs", "nfs4", "lustre", "gpfs", "cephfs", "ceph", "glusterfs", "beegfs", "cifs", "smb3", "9p",
             "virtiofs", "wekafs", "panfs", "orangefs", "afs", "davfs")


def shared_fs(fs_type: str) -> bool:
    return fs_type in SHARED_FS or fs_type.startswith("fuse.")


CUT_OFF = ("one writer stopped half-way (a full disk or quota, a kill) truncates an artifact the others "
           "then fail to load (\"Bytes object is corrupted, checksum does not match\")")


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    info = facts.shared_caches
    if info is None:
        return one(Status.INCONCLUSIVE, "how this torch saves its compiled artifacts was not read "
                   "(facts from an older doctor)")
    torch = f"torch {facts.torch.version}"
    if info.artifact_save is None:
        return one(Status.NOT_APPLICABLE, f"{torch} has no standalone compiled artifacts to save "
                   "(torch/_inductor/standalone_compile.py, from torch 2.8)")
    if info.artifact_save == "atomic":
        return one(Status.OK, f"{torch} saves its compiled artifacts atomically "
                   f"({info.artifact_save_source}: write_atomic, a temporary file renamed over the old "
                   "one): a writer that stops half-way leaves the artifact others load whole")
    how = f"{torch} saves its compiled artifacts in place ({info.artifact_save_source}: open(path, \"wb\"))"
    if not info.vllm:
        return one(Status.NOT_APPLICABLE, f"{how}, but nothing installed here keeps them in a shared cache "
                   "(vLLM is not installed); a program of yours that saves standalone_compile artifacts to "
                   "one path from several processes is exposed")
    if info.vllm_cache_off:
        return one(Status.NOT_APPLICABLE,
                   f"{how}; vLLM {info.vllm}'s compile cache is off ({info.vllm_cache_off})")
    cache = info.vllm_cache
    where = (f"vLLM {info.vllm}'s compile cache {cache.path} ({cache.source})" if cache
             else "vLLM's compile cache")
    if cache is not None and cache.fs_type and shared_fs(cache.fs_type):
        return one(Status.LIKELY, f"{how}; {where} is on {cache.fs_type} ({cache.mount_point}), which "
                   f"every host that mounts it writes: {CUT_OFF}", path=cache.path)
    if info.local_processes and info.local_processes > 1:
        return one(Status.LIKELY, f"{how}; {info.local_processes} processes were launched on this host "
                   f"(LOCAL_WORLD_SIZE) and share {where}: {CUT_OFF}", path=cache.path if cache else None)
    fs = f" on {cache.fs_type}," if cache is not None and cache.fs_type else ""
    return one(Status.INCONCLUSIVE, f"{how}; {where} is{fs} a local file system: only several vLLM engines "
               "sharing it, or a save cut off by a full disk, truncate an artifact, and how many engines "
               "run cannot be seen from here")


def predict(inp: PlanInput) -> List[RuleOutcome]:
    """`plan`: a torch that saves in place is exposed, never affected by its version alone: who shares
    the cache (vLLM's on a network file system, several engines on one host) is the machine's, so a
    release in the range cannot be predicted (and `plan --suggest` passes none over for it)."""
    from inductor_doctor.core.plan_input import once_installed, predict_from_versions, unpredictable

    out = []
    for o in predict_from_versions(inp, ISSUE):
        if o.status in (Status.AFFECTED, Status.LIKELY):
            return unpredictable(f"{o.reason}, which saves compiled artifacts in place; whether several "
                                 "writers share its compile cache is the machine's", once_installed(ISSUE.id))
        out.append(o)
    return out


ISSUE = known_issue(__name__)
