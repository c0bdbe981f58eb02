"""Where Inductor and Triton keep compiled code, and whether that place can hold and run it.

Both write a shared object into their cache directory and then `dlopen` it. A directory that the
process cannot create or write (another user's `/tmp/torchinductor_<user>`, a read-only home in a
container) fails the write; a `noexec` mount (a hardened `/tmp`) fails the load with "failed to map
segment from shared object". Both are plain file-system facts, read here without importing torch:

* Inductor, `torch/_inductor/runtime/cache_dir_utils.py`: `TORCHINDUCTOR_CACHE_DIR`, else
  `<tempfile.gettempdir()>/torchinductor_<user>` (the user name sanitised for file names).
* Triton, `triton/runtime/cache.py` (`knobs.cache.dir`): `TRITON_CACHE_DIR`, else
  `<TRITON_HOME or ~>/.triton/cache`. Inductor points Triton at `<inductor dir>/triton/<device>`
  for the kernels it generates, so Triton's own default matters for user-written kernels.

Inductor's parallel compile workers are a Python process pool, and every such pool needs POSIX
semaphores, which glibc keeps as files in `/dev/shm`: where that is missing, read-only, not
writable or full, the pool cannot start (compile-workers-fail). `probe_shm` reads it the same cheap
way: one `statvfs`, one `access`, the mount table already read.

Call: `gather_caches(env)` with the target's environment (the doctor's own by default); it never
raises and takes a few milliseconds (a stat per path component and one read of /proc/self/mounts).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import struct
import sys
import tempfile
import time
from typing import List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import AutotuneCacheInfo, CacheDirInfo, CacheInfo, CacheScan, ShmInfo
from inductor_doctor.probe.step import Step

#: How long the look for truncated objects may take per cache, however large the cache.
SCAN_BUDGET_S = 0.05

MOUNTS = "/proc/self/mounts"
PSEUDO_FS = ("proc", "sysfs", "cgroup", "cgroup2", "devpts")

SHM = "/dev/shm"
#: Less free than this in /dev/shm (or fewer inodes) and a pool's semaphores may not fit: each is a
#: file of one page while it is created (a ProcessPoolExecutor makes about five), and whatever else
#: uses /dev/shm (DataLoader batches, NCCL) comes and goes meanwhile.
SHM_LOW_BYTES = 1 << 20
SHM_LOW_INODES = 64


def _user() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry and no LOGNAME/USER: Inductor falls back the same way
        user = "unknown"
    return re.sub(r'[\\/:*?"<>|]', "_", user)


def _tempdir(env: Mapping[str, str]) -> str:
    """`tempfile.gettempdir()` as a process with `env` would answer it.

    Python takes the first of TMPDIR, TEMP, TMP, /tmp, /var/tmp, /usr/tmp in which it can create a
    file, so an unusable TMPDIR is skipped rather than fatal; `os.access` stands in for the write.
    """
    names = [env.get(n) for n in ("TMPDIR", "TEMP", "TMP")]
    for value in [*names, "/tmp", "/var/tmp", "/usr/tmp"]:
        if value and os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return value
    return tempfile.gettempdir()


def inductor_dir(env: Mapping[str, str]) -> Tuple[str, str]:
    explicit = env.get("TORCHINDUCTOR_CACHE_DIR")
    if explicit:
        return explicit, "TORCHINDUCTOR_CACHE_DIR"
    return os.path.join(_tempdir(env), "torchinductor_" + _user()), "default (<tmp>/torchinductor_<user>)"


def triton_dir(env: Mapping[str, str]) -> Tuple[str, str]:
    explicit = env.get("TRITON_CACHE_DIR")
    if explicit:
        return explicit, "TRITON_CACHE_DIR"
    home = env.get("TRITON_HOME") or env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".triton", "cache"), "default (<TRITON_HOME or ~>/.triton/cache)"


def read_mounts(path: str = MOUNTS) -> List[Tuple[str, str, List[str]]]:
    """`(mount point, fs type, options)` in mount order; later entries shadow earlier ones."""
    out: List[Tuple[str, str, List[str]]] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4:
                    point = parts[1].replace("\\040", " ").replace("\\011", "\t")
                    out.append((point, parts[2], parts[3].split(",")))
    except OSError:
        pass
    return out


def mount_of(path: str, mounts: List[Tuple[str, str, List[str]]]) -> Optional[Tuple[str, str, List[str]]]:
    """The mount that holds `path` (its real path): the longest matching mount point, last wins."""
    real = os.path.realpath(path)
    best: Optional[Tuple[str, str, List[str]]] = None
    for point, fs, opts in mounts:
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fs, opts)
    return best


def _nearest_existing(path: str) -> str:
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def probe_dir(name: str, path: str, source: str,
              mounts: List[Tuple[str, str, List[str]]]) -> CacheDirInfo:
    info = CacheDirInfo(name=name, path=path, source=source)
    try:
        info.exists = os.path.isdir(path)
        target = path if info.exists else _nearest_existing(path)
        mount = mount_of(target, mounts)
        if mount is not None:
            info.mount_point, info.fs_type, info.mount_options = mount[0], mount[1], list(mount[2])
        if not os.path.isdir(target):
            info.writable = False
            info.error = f"{target} is not a directory"
        elif "ro" in info.mount_options:
            info.writable = False
            info.error = f"{info.mount_point} is mounted read-only"
        elif info.fs_type in PSEUDO_FS:
            info.writable = False
            info.error = f"{info.mount_point} is a {info.fs_type} file system: no files can be made there"
        else:
            # os.access asks the kernel, so it answers for this user (root passes everywhere).
            info.writable = os.access(target, os.W_OK | os.X_OK)
            if not info.writable:
                info.error = f"{target} is not writable by this user"
    except OSError as exc:
        info.error = f"{type(exc).__name__}: {exc}"
    return info


def elf_truncated(path: str, size: int) -> bool:
    """Whether the shared object is shorter than its own ELF header says (its section headers lie
    past the end), or shorter than a header at all. Reads 64 bytes; a file that is not ELF is left
    alone."""
    if size < 64:
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    if head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return False
    wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
    (shoff,) = struct.unpack_from(end + ("Q" if wide else "I"), head, 0x28 if wide else 0x20)
    entsize, count = struct.unpack_from(end + "HH", head, 0x3A if wide else 0x2E)
    return shoff + entsize * count > size


def scan(path: str, budget_s: float = SCAN_BUDGET_S) -> CacheScan:
    """Truncated shared objects under `path`, looked for breadth first within `budget_s`."""
    out = CacheScan()
    deadline = time.monotonic() + budget_s
    stack = [path]
    while stack:
        if time.monotonic() > deadline:
            out.complete = False
            break
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".so") and entry.is_file(follow_symlinks=False):
                    out.objects += 1
                    if elf_truncated(entry.path, entry.stat().st_size):
                        out.truncated.append(entry.path)
            except OSError:
                continue
    return out


def usable_cpus() -> Optional[int]:
    """CPUs this process may run on, as Inductor counts them (`torch._utils.cpu_count`)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def probe_shm(mounts: List[Tuple[str, str, List[str]]], path: str = SHM) -> ShmInfo:
    """Whether a process pool can make its semaphores in /dev/shm: it exists, this user can write
    there (a read-only mount refuses even root), and some space and inodes are left."""
    info = ShmInfo(path=path, cpus=usable_cpus())
    try:
        info.exists = os.path.isdir(path)
        if not info.exists:
            info.writable = False
            info.error = f"{path} does not exist"
            return info
        mount = mount_of(path, mounts)
        if mount is not None:
            info.mount_point, info.fs_type, info.mount_options = mount[0], mount[1], list(mount[2])
        st = os.statvfs(path)
        if st.f_blocks:  # 0: a tmpfs mounted without a size limit
            info.size_bytes = st.f_blocks * st.f_frsize
            info.free_bytes = st.f_bavail * st.f_frsize
        if st.f_files:  # 0: no inode limit
            info.free_inodes = st.f_favail
        info.read_only = "ro" in info.mount_options or bool(st.f_flag & os.ST_RDONLY)
        if info.read_only:
            info.writable = False
            info.error = f"{info.mount_point or path} is mounted read-only"
        else:
            # os.access asks the kernel, so it answers for this user (root passes everywhere).
            info.writable = os.access(path, os.W_OK | os.X_OK)
            if not info.writable:
                info.error = f"{path} is not writable by this user"
        low_space = info.free_bytes is not None and info.free_bytes < SHM_LOW_BYTES
        low_inodes = info.free_inodes is not None and info.free_inodes < SHM_LOW_INODES
        info.full = low_space or low_inodes
        if info.full and info.error is None:
            left = f"{info.free_bytes} bytes" if low_space else f"{info.free_inodes} inodes"
            info.error = f"{path} is full ({left} left)"
    except OSError as exc:
        info.error = f"{type(exc).__name__}: {exc}"
    return info


def autotune_dir(env: Mapping[str, str]) -> str:
    """Where DeepSpeed's Triton matmul keeps its autotune tables
    (deepspeed/ops/transformer/inference/triton/matmul_ext.py: `TRITON_CACHE_DIR`, else
    `~/.triton/autotune`), one pickled `{tuning key: triton.Config}` per kernel, keyed by shapes only."""
    home = env.get("HOME") or os.path.expanduser("~")
    return env.get("TRITON_CACHE_DIR") or os.path.join(home, ".triton", "autotune")


def _target_of(meta: object) -> Optional[str]:
    """`cuda 90` / `hip gfx942` from a compiled kernel's metadata (Triton 3.x: `target`)."""
    target = meta.get("target") if isinstance(meta, dict) else None
    if isinstance(target, dict) and target.get("backend") and target.get("arch") is not None:
        return f"{target['backend']} {target['arch']}"
    return None


def scan_autotune(env: Mapping[str, str], budget_s: float = SCAN_BUDGET_S) -> AutotuneCacheInfo:
    """Autotune tables not keyed by the GPU, and the targets of Triton's cached kernels with the most
    shared memory each needs there (each kernel's `<name>.json` metadata), within `budget_s`."""
    out = AutotuneCacheInfo()
    deadline = time.monotonic() + budget_s
    tables = autotune_dir(env)
    try:
        out.tables = sorted(e.path for e in os.scandir(tables) if e.name.endswith(".pickle") and e.is_file())
    except OSError:
        pass
    root = triton_dir(env)[0]
    try:
        groups = list(os.scandir(root))
    except OSError:
        return out
    for group in groups:
        if time.monotonic() > deadline:
            out.complete = False
            break
        try:
            names = [e for e in os.scandir(group.path) if e.name.endswith(".json") and not e.name.startswith(
                "__grp__") and not e.name.endswith(".autotune.json") and e.stat().st_size < 65536]
        except OSError:
            continue
        for entry in names:
            try:
                with open(entry.path, encoding="utf-8") as f:
                    meta = json.load(f)
            except (OSError, ValueError):
                continue
            target, shared = _target_of(meta), meta.get("shared") if isinstance(meta, dict) else None
            if target and isinstance(shared, int):
                out.kernels[target] = max(shared, out.kernels.get(target, 0))
    return out


def gather_caches(env: Optional[Mapping[str, str]] = None, mounts_file: str = MOUNTS) -> CacheInfo:
    """Inductor's and Triton's cache directories as the target process would pick them, and
    /dev/shm (Linux only: elsewhere POSIX semaphores do not live in files)."""
    env = os.environ if env is None else env
    mounts = read_mounts(mounts_file)
    info = CacheInfo()
    if not mounts:
        info.notes.append(f"could not read {mounts_file}: mount options unknown")
    for name, (path, source) in (("inductor", inductor_dir(env)), ("triton", triton_dir(env))):
        found = probe_dir(name, path, source, mounts)
        if found.exists:
            found.cache_scan = scan(path)
        info.dirs.append(found)
    if sys.platform.startswith("linux"):
        info.shm = probe_shm(mounts)
    info.autotune = scan_autotune(env)
    return info


STEP = Step("caches", ("environ",), gather_caches, what="cache directories")
