"""A compile cache holding half-written shared objects, or kept on a network file system.

Inductor and Triton write each compiled kernel's shared object into their cache and load it back,
then and on every later run. A write cut short (a full disk, a compile killed mid-write, a network
file system's delayed write) leaves a file the loader refuses forever after: `OSError: .../xy/
cxyz....so: file too short` (pytorch#102539; a maintainer's advice, pytorch#180841: clear the
cache); cut a little later, "cannot read file data"; later still, the process dies of SIGBUS
(glibc 2.36, tried by hand on a real library cut at 40, 100-300 and 600+ bytes). On NFS, Lustre
or GPFS, concurrent writers and client caching add "Stale file handle" (errno 116) and missing-file
races (pytorch#173679, triton-lang/triton#11512, vllm#18956).

The probe looks at the shared objects in both caches within a fixed time budget, however large the
cache (an ELF header that promises section headers past the end of the file is a truncated write),
and reads the cache's file-system type from the mount table. No canary: replaying the fault would
need the fault.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: File systems whose clients cache and reorder writes: shared compile caches there race.
NETWORK_FS = ("nfs", "nfs4", "lustre", "gpfs", "beegfs", "cifs", "smb3", "smbfs", "fuse.sshfs",
              "ceph", "fuse.ceph", "glusterfs", "fuse.glusterfs")


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")  # no Inductor to load from a cache: nothing here to be "ok"
    caches = facts.caches
    if caches is None or not caches.dirs:
        return [RuleOutcome(Status.INCONCLUSIVE, "the compile caches were not probed", Basis.STATIC)]
    bad: List[str] = []
    risky: List[str] = []
    looked: List[str] = []
    for d in caches.dirs:
        scan = d.cache_scan
        if scan is not None:
            looked.append(f"{d.name} {scan.objects} objects" + ("" if scan.complete else ", in part"))
            if scan.truncated:
                more = f" and {len(scan.truncated) - 1} more" if len(scan.truncated) > 1 else ""
                bad.append(f"{d.name} cache ({d.path}): {scan.truncated[0]}{more} is shorter than its "
                           "ELF header says (a write cut short); loading it fails with 'file too short'")
        if (d.fs_type or "") in NETWORK_FS:
            risky.append(f"the {d.name} cache ({d.path}) is on {d.fs_type} ({d.mount_point})")
    if bad:
        return [RuleOutcome(Status.AFFECTED, "; ".join(bad), Basis.STATIC)]
    if risky:
        return [RuleOutcome(Status.LIKELY, "; ".join(risky) + ": concurrent compiles there race "
                            "('Stale file handle', half-written files); put the caches on local disk",
                            Basis.STATIC)]
    where = ", ".join(looked) or "no cache directory yet"
    return [RuleOutcome(Status.OK, f"no truncated object in the compile caches ({where}), none on a "
                        "network file system", Basis.STATIC)]
