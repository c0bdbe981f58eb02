"""The toolchain facts that probes gather and rules read.

Every field may be missing (`None`): a probe that could not find or read something says so in the
`notes` of its section rather than failing. Rules must treat `None` as "unknown", never as "fine".
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from inductor_doctor.core.declare import fact


@dataclass
class PythonInfo:
    executable: str
    version: str = fact(merge="python")  # e.g. "3.11.7"
    implementation: str = "cpython"
    abiflags: str = ""  # "t" for free-threaded builds
    include_dir: Optional[str] = None
    has_python_h: Optional[bool] = None
    platform: str = ""  # sys.platform of the target interpreter
    machine: str = ""
    glibc: Optional[str] = fact(None, merge="glibc")
    libstdcxx_path: Optional[str] = None
    libstdcxx_glibcxx_max: Optional[str] = fact(None, merge="libstdc++ GLIBCXX")  # e.g. "3.4.30"
    libstdcxx_cxxabi_max: Optional[str] = None  # e.g. "1.3.13"
    site_packages: List[str] = field(default_factory=list)
    error: Optional[str] = None  # set when the target interpreter could not be queried at all
    prefix: Optional[str] = None  # sys.prefix (the venv or conda env)
    base_prefix: Optional[str] = None
    gil_disabled: Optional[bool] = None
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class TorchInfo:
    version: Optional[str] = fact(None, merge="torch")  # public version, e.g. "2.13.0+cpu"
    path: Optional[str] = None  # the torch package directory
    #: The CUDA version torch was built with, None for CPU builds.
    cuda: Optional[str] = fact(None, merge="torch CUDA")
    hip: Optional[str] = fact(None, merge="torch HIP")
    git_version: Optional[str] = fact(None, merge="torch git")
    cxx11_abi: Optional[bool] = fact(None, merge="torch C++11 ABI")
    built_with: Optional[str] = None  # e.g. "GCC 13.3" (from libtorch's .comment section)
    include_dir: Optional[str] = None
    lib_dir: Optional[str] = None
    libtorch_cpu: Optional[str] = None
    triton_pin: Optional[str] = None  # requirement torch's metadata pins, e.g. "==3.6.0"
    triton_requirement: Optional[str] = None  # the whole Requires-Dist line, markers included
    import_ok: Optional[bool] = fact(None, cost="live")
    import_error: Optional[str] = fact(None, cost="live")
    #: Peak memory of a process that has imported torch (the live probe's): every compile worker's floor.
    import_rss_mib: Optional[int] = fact(None, cost="live", key=False)
    notes: List[str] = fact(default_factory=list, key=False)
    # --- GPU/CUDA catalog (torch-gpu-arch-missing) ---
    #: `torch.cuda.get_arch_list()`, e.g. ["sm_80", "sm_90", "compute_90"]; None: unknown.
    cuda_arch_list: Optional[List[str]] = None
    cuda_arch_source: Optional[str] = None  # the file it was read from, or "live probe"


@dataclass
class TritonInfo:
    version: Optional[str] = fact(None, merge="triton")
    #: Where `import triton` finds it: a rank with its own Triton on PYTHONPATH differs here.
    path: Optional[str] = fact(None, merge="triton path")
    distribution: Optional[str] = None  # "triton", "pytorch-triton", "triton-windows", ...
    bundled_ptxas: Optional[str] = None
    bundled_ptxas_version: Optional[str] = None
    import_ok: Optional[bool] = fact(None, cost="live")
    import_error: Optional[str] = fact(None, cost="live")
    notes: List[str] = fact(default_factory=list, key=False)
    #: The installed distribution's own `triton` directory, when `import triton` finds another copy
    #: first (`path`: a stale tree on PYTHONPATH, say); None when the import is the installed one.
    shadowed_install: Optional[str] = None
    #: The version of the copy that imports, read from its files, when it is not the installed one.
    imported_version: Optional[str] = None


@dataclass
class GPUInfo:
    index: int
    name: str
    sm: Optional[str] = None  # compute capability as "9.0"
    memory_mib: Optional[int] = None
    #: What nvidia-smi says is free and used now (other processes' memory); never part of a key.
    memory_free_mib: Optional[int] = fact(None, key=False)
    memory_used_mib: Optional[int] = fact(None, key=False)
    sm_count: Optional[int] = fact(None, cost="live")  # multiprocessors
    uuid: Optional[str] = None
    big_gpu: Optional[bool] = fact(None, cost="live")  # torch._inductor.utils.is_big_gpu, from the live probe
    # --- GPU/CUDA catalog (cuda-devices-hidden, triton-shared-memory) ---
    #: nvidia-smi's index of this GPU; `index` is torch's (after CUDA_VISIBLE_DEVICES).
    driver_index: Optional[int] = None
    mig: Optional[str] = None  # the MIG device's UUID when CUDA_VISIBLE_DEVICES names a MIG instance
    #: Shared memory one block may opt in to, in bytes (what Triton's OutOfResources calls the
    #: "Hardware limit"); live probe: `get_device_properties(i).shared_memory_per_block_optin`.
    smem_per_block_optin: Optional[int] = fact(None, cost="live")

    @property
    def device(self) -> str:
        return f"cuda:{self.index}"


@dataclass
class PtxasInfo:
    """One ptxas Triton may run (bundled, Blackwell, or named by a variable), as it answered here."""

    path: str
    source: str  # "bundled ptxas", "bundled ptxas-blackwell", "TRITON_PTXAS_PATH", "PATH", ...
    release: Optional[str] = None  # the CUDA release it reports, e.g. "12.8"
    accepts: Dict[str, bool] = field(default_factory=dict)  # `--gpu-name` value -> assembles


@dataclass
class CudaLibInfo:
    """One CUDA library torch's `nvidia-*` wheels ship, and which copy the loader maps instead.

    GPU/CUDA catalog (cuda-libs-shadowed). `resolved` follows glibc's search for the import of
    torch (its RPATHs, LD_LIBRARY_PATH, RUNPATHs, the loader cache) and torch's own preloading;
    `loaded` is what the live probe found in /proc/self/maps after `import torch`.
    """

    soname: str  # "libnvJitLink.so.12"
    wheel: Optional[str] = None  # the file the nvidia-* wheel ships
    resolved: Optional[str] = None  # the file the import would map; None: not found at all
    via: str = ""  # how: "RPATH of libtorch_cuda.so", "LD_LIBRARY_PATH", "preloaded by torch", ...
    needed_by: Optional[str] = None  # the library whose dependency it resolves
    missing_symbols: List[str] = field(default_factory=list)  # what needed_by imports and it lacks
    same_build: Optional[bool] = None  # resolved is byte-for-byte the wheel's file (size + head)
    loaded: Optional[str] = fact(None, cost="live")  # the file actually mapped
    loaded_same_build: Optional[bool] = fact(None, cost="live")  # that file is the wheel's build


@dataclass
class CudaToolkitInfo:
    """The local CUDA toolkit, as `torch.utils.cpp_extension._find_cuda_home` finds it.

    GPU/CUDA catalog (cuda-toolkit-missing): AOTInductor and CUDA extensions need it; plain
    torch.compile does not (Triton brings its own ptxas).
    """

    cuda_home: Optional[str] = None  # what torch would use; None: torch finds none
    source: Optional[str] = None  # "CUDA_HOME", "CUDA_PATH", "nvcc on PATH", "/usr/local/cuda"
    cuda_home_exists: Optional[bool] = None
    nvcc: Optional[str] = None  # the nvcc torch runs: CUDA_HOME/bin/nvcc
    nvcc_on_path: Optional[str] = None
    nvcc_version: Optional[str] = None  # "12.4"
    #: The virtual architectures that nvcc can compile for, as `nvcc --list-gpu-arch` prints them
    #: ("compute_75", ..., "compute_121"); empty: not read (no nvcc, or one older than the option).
    nvcc_archs: List[str] = field(default_factory=list)
    cuda_runtime_h: Optional[str] = None  # CUDA_HOME/include/cuda_runtime.h when present
    #: The CUDA library headers torch's ATen/cuda/CUDAContextLight.h includes (read from the installed
    #: torch: cusparse.h, cublas_v2.h, cublasLt.h, cusolverDn.h): every CUDA extension built against
    #: torch compiles them.
    extension_headers: List[str] = field(default_factory=list)
    #: Of those, and of the other library headers JIT builds include (curand.h, cufft.h, nvrtc.h), the
    #: ones CUDA_HOME/include lacks (cuda-toolkit-incomplete).
    missing_headers: List[str] = field(default_factory=list)
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class CudaInfo:
    driver_version: Optional[str] = fact(None, merge="driver")  # e.g. "580.159.03"
    #: The highest CUDA the driver supports, e.g. "13.0".
    driver_cuda_version: Optional[str] = fact(None, merge="driver CUDA")
    #: The cudart torch loads (live) or ships (static).
    runtime_version: Optional[str] = fact(None, merge="CUDA runtime")
    ptxas_path: Optional[str] = None
    ptxas_version: Optional[str] = fact(None, merge="ptxas")
    libcuda_paths: List[str] = field(default_factory=list)  # what a loader search finds
    libcuda_so_unversioned: Optional[bool] = None  # is a plain libcuda.so findable (Triton links it)
    #: What the loader cache lists for libcuda.so.1 but is not there (or is no ELF file): a stale
    #: cache, a hidden directory. Triton searches those directories, and stops there.
    libcuda_missing: List[str] = field(default_factory=list)
    gpus: List[GPUInfo] = fact(default_factory=list, required=True)
    #: The cuDNN torch loads.
    cudnn_version: Optional[str] = fact(None, cost="live", merge="cuDNN", order=2.5)
    nvidia_smi: Optional[str] = None  # path of the nvidia-smi that answered
    notes: List[str] = fact(default_factory=list, key=False)
    ptxas_binaries: List[PtxasInfo] = field(default_factory=list)  # every ptxas Triton may run, asked
    # --- GPU/CUDA catalog (cuda-devices-hidden, cuda-driver-too-old, cuda-libs-shadowed) ---
    #: Every GPU the driver lists, in nvidia-smi's order (PCI bus order), whatever is visible.
    #: `gpus` holds the ones torch will see, numbered as torch numbers them.
    driver_gpus: List[GPUInfo] = field(default_factory=list)
    visible_devices: Optional[str] = None  # CUDA_VISIBLE_DEVICES as set; None: unset (all visible)
    device_order: Optional[str] = None  # CUDA_DEVICE_ORDER as set; None: CUDA's FASTEST_FIRST
    #: How CUDA_VISIBLE_DEVICES resolved, one line per entry that did not name a GPU, or why not.
    visibility: List[str] = field(default_factory=list)
    visibility_resolved: Optional[bool] = None  # False: entries the probe could not match (MIG)
    local_rank: Optional[str] = None  # LOCAL_RANK as set (torchrun, accelerate, deepspeed)
    torch_device_count: Optional[int] = fact(None, cost="live")  # torch.cuda.device_count()
    driver_sufficient: Optional[bool] = fact(None, cost="live")  # torch._C._cuda_isDriverSufficient()
    driver_api_version: Optional[int] = fact(None, cost="live")  # cuDriverGetVersion as torch reports it
    libs: List[CudaLibInfo] = field(default_factory=list)  # the CUDA libraries torch's wheels ship
    visible_count: Optional[int] = None  # GPUs CUDA_VISIBLE_DEVICES leaves (before the live probe's say)


@dataclass
class CompilerInfo:
    """A C or C++ compiler, as the compiler itself answers."""

    command: Optional[str] = None  # as configured (CXX, cpp.cxx, or the default search)
    path: Optional[str] = fact(None, merge="{}")
    kind: Optional[str] = None  # gcc | clang | apple-clang | msvc | other
    version: Optional[str] = fact(None, merge="{} version")
    works: Optional[bool] = None  # compiled a trivial program
    openmp: Optional[bool] = None  # `#include <omp.h>` compiles with -fopenmp
    python_h: Optional[bool] = None  # `#include <Python.h>` compiles with the target's include dir
    error: Optional[str] = None
    version_line: Optional[str] = None  # the first line of `--version`
    chosen_by: Optional[str] = None  # why this one: "CXX", "default search", ...
    notes: List[str] = fact(default_factory=list, key=False)
    openmp_error: Optional[str] = None  # the compiler's first error line for `#include <omp.h>`
    python_h_error: Optional[str] = None  # the same for `#include <Python.h>`
    does_not_run: List[str] = field(default_factory=list)  # found on PATH, but `--version` failed or hung
    #: The C++ compilers on PATH by name (g++, c++, clang++, g++-12, clang++-16 -> their paths): the
    #: advice can then name one that is there instead of installing one.
    on_path: Dict[str, str] = field(default_factory=dict)
    #: omp.h files installed where some compiler looks (LLVM's per-version resource directories,
    #: GCC's, Homebrew's libomp): installed but not found by this compiler is another cause than
    #: not installed.
    omp_headers: List[str] = field(default_factory=list)


@dataclass
class AbiInfo:
    """The const_data_ptr ABI probe: what the compiler references vs what libtorch exports. The
    verdict is the knowledge base's (kb/const_data_ptr_abi.py), never the probe's."""

    #: How far the probe got: None (it did not run), "pending" (it runs beside the canaries),
    #: "no-torch", "no-headers" (torch ships no TensorBase.h), "no-library" (no libtorch_cpu.so),
    #: "no-compiler", "timed-out", "not-compiled", "failed" (`error` says why each stopped short),
    #: "compared" (`referenced` and `missing` are known).
    stage: Optional[str] = None
    error: Optional[str] = None
    compiler: Optional[str] = None
    flags: List[str] = field(default_factory=list)
    referenced: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    exported_spelling: Optional[str] = None
    duration_s: float = fact(0.0, key=False)
    compiler_path: Optional[str] = None
    compiler_version: Optional[str] = None  # e.g. "clang 19.1.7"
    library: Optional[str] = None  # the libtorch_cpu.so looked up
    torch_version: Optional[str] = None
    cached: bool = fact(False, key=False)  # the same compiler, flags, headers and library were checked before


@dataclass
class XlaInfo:
    version: Optional[str] = fact(None, merge="torch_xla")
    path: Optional[str] = None
    pjrt_device: Optional[str] = None
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class CacheScan:
    """The shared objects in a compile cache whose ELF headers promise more than the file holds: a
    write cut short (a full disk, a killed compile, a network file system), which the loader refuses
    with "file too short" or "ELF load command past end of file"."""

    truncated: List[str] = field(default_factory=list)
    objects: int = 0  # shared objects looked at
    complete: bool = True  # False: the time budget ran out first (the rest is unread)


@dataclass
class CacheDirInfo:
    """One directory the compile stack writes its compiled code to, and loads it back from."""

    name: str  # "inductor" | "triton"
    path: str
    source: str = ""  # what chose it: "TORCHINDUCTOR_CACHE_DIR", "default", ...
    exists: Optional[bool] = None
    writable: Optional[bool] = None  # the directory, or the nearest existing parent that creates it
    mount_point: Optional[str] = None
    fs_type: Optional[str] = None
    mount_options: List[str] = field(default_factory=list)  # e.g. ["rw", "noexec"]
    error: Optional[str] = None
    # What is in it (compile-cache-stale): never part of a canary's key, it changes with every compile.
    cache_scan: Optional[CacheScan] = fact(None, key=False)


@dataclass
class ShmInfo:
    """POSIX shared memory, `/dev/shm`: where glibc keeps the semaphores of every Python process pool.

    Inductor's parallel compile workers are such a pool (compile-workers-fail): it cannot start
    where `/dev/shm` is missing, read-only, not writable by this user, or full (space or inodes).
    """

    CLOSED = True  # its JSON holds these keys and no others

    path: str = fact("/dev/shm", required=True)
    exists: Optional[bool] = fact(None, required=True)
    writable: Optional[bool] = fact(None, required=True)  # by this user, a read-only mount included
    read_only: Optional[bool] = None  # mounted read-only (its options, or the kernel's ST_RDONLY)
    mount_point: Optional[str] = None
    fs_type: Optional[str] = None
    mount_options: List[str] = field(default_factory=list)  # e.g. ["rw", "nosuid", "nodev", "noexec"]
    size_bytes: Optional[int] = fact(None, schema={"minimum": 0})  # None: unknown, or a tmpfs without a limit
    #: What is left; never part of a canary's key (it changes with every DataLoader batch).
    free_bytes: Optional[int] = fact(None, key=False, schema={"minimum": 0})
    free_inodes: Optional[int] = fact(None, key=False, schema={"minimum": 0})  # None: unknown, or no limit
    full: Optional[bool] = None  # too little space or too few inodes left for a pool's semaphores
    #: CPUs this process may run on: Inductor's default number of compile workers is min(32, cpus),
    #: and with one CPU it starts no pool at all.
    cpus: Optional[int] = fact(None, schema={"minimum": 1})
    error: Optional[str] = None  # why it cannot hold a semaphore, or why it could not be read


@dataclass
class AutotuneCacheInfo:
    """Autotune results replayed from disk, and the GPUs the Triton cache beside them was compiled for
    (triton-shared-memory): a table chosen on an H100 and replayed on an RTX 4090 asks for more shared
    memory per block than the 4090 has. Triton's own disk cache of autotuning (3.4+, `*.autotune.json`)
    is keyed by the GPU and never replays elsewhere; a table that is not (DeepSpeed's Triton matmul:
    `<TRITON_CACHE_DIR or ~/.triton/autotune>/*.pickle`) does."""

    #: Tables not keyed by the GPU, by path.
    tables: List[str] = field(default_factory=list)
    #: The compiled kernels of Triton's cache, by target ("cuda 90", "hip gfx942"): the most shared
    #: memory one block of them needs there, in bytes.
    kernels: Dict[str, int] = field(default_factory=dict)
    complete: bool = True  # False: the time budget ran out before every file was read


@dataclass
class CacheInfo:
    """Inductor's and Triton's code caches, and /dev/shm that its compile workers need (probe/caches.py)."""

    dirs: List[CacheDirInfo] = field(default_factory=list)
    notes: List[str] = fact(default_factory=list, key=False)
    shm: Optional[ShmInfo] = None  # None: not probed (not Linux, or facts from an older doctor)
    #: What is in them of autotuning (None: not probed): never part of a canary's key.
    autotune: Optional[AutotuneCacheInfo] = fact(None, key=False)


@dataclass
class ResourceInfo:
    """The CPUs and memory this process may use, and the ranks that share the node (probe/resources.py):
    what Inductor's compile workers are sized against (compile-workers-oversubscribed). None: unknown.
    Never in a canary's key (the section is declared so in `Facts`): free memory changes by the
    second, and no canary's outcome depends on the quota."""

    cpus_host: Optional[int] = None  # os.cpu_count()
    #: len(os.sched_getaffinity(0)): what torch counts for its compile workers.
    cpus_affinity: Optional[int] = None
    #: The tightest cgroup CPU quota (v2 cpu.max, v1 cfs quota / period), in CPUs; None: no quota.
    cpu_quota: Optional[float] = fact(None, merge="CPU quota")
    cpu_quota_file: Optional[str] = None
    memory_total_mib: Optional[int] = None  # MemTotal
    memory_available_mib: Optional[int] = None  # MemAvailable, now
    #: The tightest cgroup memory limit (v2 memory.max, v1 memory.limit_in_bytes); None: no limit.
    memory_limit_mib: Optional[int] = fact(None, merge="memory limit")
    memory_limit_file: Optional[str] = None
    #: Ranks on this node as a launcher announced them (LOCAL_WORLD_SIZE, SLURM_NTASKS_PER_NODE...).
    local_ranks: Optional[int] = None
    local_ranks_from: Optional[str] = None


@dataclass
class BypassSetting:
    """One setting that makes torch.compile hollow (envvars.BYPASSES), and where it comes from."""

    setting: str  # as written: "TORCH_COMPILE_DISABLE=1", "torch._dynamo.config.suppress_errors = True"
    effect: str  # "no-op" | "eager-fallback" | "backend"
    source: str  # "environment", "/usr/lib/python3.11/sitecustomize.py:3", "set at start-up"
    how: str = ""  # how the installed torch reads it, and from which file


@dataclass
class StartupLine:
    """A line of a file Python runs at start-up (sitecustomize, usercustomize, a .pth) naming a setting."""

    path: str
    line: int
    text: str
    mtime_ns: Optional[int] = None  # keys the live probe's kept answer: an edit is a new answer


@dataclass
class CompileSettingsInfo:
    """What makes torch.compile a no-op, fall back to eager, or use another backend (compile-bypassed)."""

    found: List[BypassSetting] = field(default_factory=list)
    startup: List[StartupLine] = field(default_factory=list)
    notes: List[str] = fact(default_factory=list, key=False)


# --- compile caches across hosts and ranks (issue 40) ------------------------------------------------


#: The compile caches a key input enters, as a line names them.
CACHE_NAMES = {"fx-graph": "FX graph", "aot-autograd": "AOTAutograd", "autotune": "autotune",
               "triton": "Triton kernel", "cpp": "C++ kernel", "artifact": "compiled-artifact"}


@dataclass
class KeyInput:
    """One input of a compile cache's key that is not the program: its value on this host, and where
    the installed release reads it. Two hosts whose inputs agree compute the same keys for the same
    program; one that differs makes every key it enters differ (a miss)."""

    #: What it is, the same on every host: "torch", "triton", "gpu", "gpu-arch", "cuda", "ptxas",
    #: "threads", "cxx", "env:TORCHINDUCTOR_MAX_AUTOTUNE", "triton-env:TRITON_DEFAULT_FP_FUSION",
    #: "config:inductor.max_autotune".
    id: str
    label: str  # as a person reads it
    #: What is compared; None: unset (a variable), none (no GPU, no Triton).
    value: Optional[str] = None
    #: The keys it enters: "fx-graph", "aot-autograd", "autotune", "triton", "cpp" (C++ kernels),
    #: "artifact" (`torch.compiler` / standalone artifacts).
    caches: List[str] = field(default_factory=list)
    #: The fleet view's group: "torch", "triton", "gpu", "cuda", "settings", "compiler", "cpu".
    group: str = "settings"
    source: str = ""  # where the installed release reads it: "torch/_inductor/codecache.py:934"
    #: What the key gets from it, where that is not the value itself: `max_autotune=True`. A variable
    #: set to what its default gives (`TORCHINDUCTOR_MAX_AUTOTUNE=0`) changes no key.
    effect: Optional[str] = None
    default: Optional[str] = None  # the effect when it is unset (variables only)
    detail: Optional[str] = None  # shown beside the value, never compared (a torch's git hash)
    known: bool = True  # False: only the live probe can tell (`value` is then what the environment says)


@dataclass
class CacheKeyInfo:
    """What enters this host's compile-cache keys besides the program (probe/cache_key.py): read from
    the installed torch's and Triton's key functions and the variables they read, cheap enough for
    every `check`. `merge` and `check --distributed` compare them across hosts and ranks
    (fleet/cache_keys.py): which input differs, and which caches will miss."""

    #: The inputs, static ones first; variables appear only where set (absent is unset).
    inputs: List[KeyInput] = field(default_factory=list)
    #: The variables that turn a cache off here (`TORCHINDUCTOR_FORCE_DISABLE_CACHES=1`): no key, no hit.
    caches_off: List[str] = field(default_factory=list)
    #: The live inputs were read (Triton's own list, the thread count, config set at start-up).
    live_read: bool = fact(False, cost="live")
    notes: List[str] = fact(default_factory=list, key=False)
    duration_s: float = fact(0.0, key=False)


@dataclass
class RemoteCacheInfo:
    """One remote compile cache configured here (TORCHINDUCTOR_*_REMOTE_CACHE, Triton's remote cache
    manager) and what its server answered (probe/remote_caches.py): reached over its own protocol
    with a short timeout, a key that cannot exist read and deleted (nothing is written)."""

    caches: List[str] = field(default_factory=list)  # "fx-graph", "aot-autograd", "autotune", "triton"
    #: What turns it on: "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1".
    settings: List[str] = field(default_factory=list)
    backend: str = "redis"  # the client it needs
    address: Optional[str] = None  # "localhost:6379", or the URL with any password removed
    #: What chose the address: "TORCHINDUCTOR_REDIS_URL", "TORCHINDUCTOR_REDIS_HOST/PORT", "default".
    via: str = ""
    password: bool = False  # a password is configured (never recorded)
    #: The client library's version for the target interpreter; None: not installed (torch then
    #: falls back to no remote cache, saying only "Unable to create cache").
    client: Optional[str] = None
    reachable: Optional[bool] = None  # None: not asked (no address, a backend the doctor cannot speak)
    #: "none" (no password needed), "ok", "required" (the server wants one, none configured),
    #: "rejected" (the password or user is wrong).
    auth: Optional[str] = None
    writable: Optional[bool] = None  # a write command is accepted (a replica, an ACL, a full disk refuse it)
    answer: Optional[str] = None  # the server's own words where it refused
    error: Optional[str] = None  # why it could not be reached
    duration_s: float = fact(0.0, key=False)


@dataclass
class SharedCacheInfo:
    """Whether what this torch writes into a compile cache survives several writers (probe/shared_caches.py):
    how it saves a standalone compiled artifact (the format vLLM's compile cache keeps), read from the
    release, and where vLLM keeps that cache and on what file system."""

    #: How `CompiledArtifact.save` writes (`torch/_inductor/standalone_compile.py`): "atomic"
    #: (`write_atomic`, torch 2.10 and later), "in-place" (`open(path, "wb")`, 2.8 and 2.9); None: this
    #: torch has no such artifacts.
    artifact_save: Optional[str] = None
    artifact_save_source: Optional[str] = None  # "torch/_inductor/standalone_compile.py:88"
    vllm: Optional[str] = None  # vLLM's version, when installed
    #: Where vLLM keeps its compile cache (VLLM_CACHE_ROOT, else <XDG_CACHE_HOME or ~/.cache>/vllm).
    vllm_cache: Optional[CacheDirInfo] = None
    vllm_cache_off: Optional[str] = None  # "VLLM_DISABLE_COMPILE_CACHE=1": it writes none
    #: The processes a launcher started on this host (LOCAL_WORLD_SIZE), each a writer.
    local_processes: Optional[int] = None


# --- platforms the doctor cannot run on here (Windows, ROCm, Intel XPU, macOS; issue 36) ---------------


@dataclass
class PathFact:
    """A path the compile stack puts on a compiler's command line or writes under, and what in it can
    break there: its length (Windows' MAX_PATH), a space, a character outside ASCII."""

    name: str  # "inductor cache", "triton cache", "python include", "torch", "temp", "home"
    path: str
    length: int = 0
    spaces: bool = False
    non_ascii: bool = False


@dataclass
class InductorClCommand:
    """How the installed torch's Inductor builds its `cl` command line on Windows and reads its output,
    read from `torch/_inductor/cpp_builder.py` (never imported): whether the include directories, the
    sources and the `/Fe` output are quoted, how the compiler's output is decoded, and whether a
    non-English MSVC is refused outright."""

    source: str
    quotes_include_dirs: Optional[bool] = None  # `/I "{inc_dir}"` (torch 2.7+), not `/I {inc_dir}`
    quotes_sources: Optional[bool] = None  # the .cpp files joined with spaces, unquoted, through 2.14
    quotes_output: Optional[bool] = None  # `/Fe{target}`, unquoted
    #: "utf-8" (through 2.9), "locale" (2.10-2.12: locale.getpreferredencoding(), strict),
    #: "locale, replace" (2.13+): SUBPROCESS_DECODE_ARGS.
    decodes_output_as: Optional[str] = None
    refuses_non_english: Optional[bool] = None  # check_msvc_cl_language_id (torch 2.9+)


@dataclass
class MsvcToolset:
    """One MSVC toolset installed under Visual Studio (`VC/Tools/MSVC/<version>`)."""

    version: str  # the toolset, "14.44.35207"; cl reports 19.44
    root: str
    hosts: List[str] = field(default_factory=list)  # "Hostx64/x64", "Hostx64/x86", ... with a cl.exe
    languages: List[int] = field(default_factory=list)  # LCIDs of cl's messages (1033: English)


@dataclass
class RuntimeDll:
    """One DLL of the Visual C++ runtime (msvcp140.dll, vcruntime140.dll...): the copy the loader takes
    for a Python extension, first in its search order, and its file version (probe/windows.py)."""

    name: str
    path: Optional[str] = None  # None: no copy anywhere it looks
    version: Optional[str] = None  # its version resource's file version, "14.29.30133.0"
    #: The other copies further down the search order, as "path (version)": a newer one there is shadowed.
    others: List[str] = field(default_factory=list)


@dataclass
class WindowsInfo:
    """What Windows decides for the compile stack, read without running the compiler: the registry's
    long-path switch, the code pages, the MSVC environment a Developer Prompt activates (or not),
    which `cl` is on PATH and for which host and target, the toolsets installed, what `CC`/`CXX` name,
    Triton's bundled TinyCC, and how this torch builds its `cl` command. The registry and the code pages
    are read only on Windows; the rest are files and variables (probe/windows.py)."""

    #: HKLM\SYSTEM\CurrentControlSet\Control\FileSystem LongPathsEnabled; None: not read.
    long_paths_enabled: Optional[bool] = None
    ansi_code_page: Optional[int] = None  # GetACP(): what locale.getpreferredencoding() answers
    oem_code_page: Optional[int] = None  # GetOEMCP(): what a console program such as cl writes
    ui_language: Optional[int] = None  # GetUserDefaultUILanguage(), an LCID
    vscmd_host_arch: Optional[str] = None  # VSCMD_ARG_HOST_ARCH, set by VsDevCmd.bat / vcvarsall.bat
    vscmd_tgt_arch: Optional[str] = None  # VSCMD_ARG_TGT_ARCH
    vc_tools_install_dir: Optional[str] = None  # VCToolsInstallDir
    vc_tools_version: Optional[str] = None  # VCToolsVersion
    include_set: bool = False  # INCLUDE names at least one directory
    lib_set: bool = False  # LIB names at least one directory
    vslang: Optional[str] = None  # VSLANG: the language cl prints in
    cl_on_path: Optional[str] = None  # the cl.exe a bare `cl` runs
    cl_host: Optional[str] = None  # "x64" from ...\bin\Hostx64\x86\cl.exe
    cl_target: Optional[str] = None  # "x86" from the same
    cl_version: Optional[str] = None  # the toolset directory it is in, "14.44.35207"
    cl_languages: List[int] = field(default_factory=list)  # LCIDs beside the cl on PATH
    toolsets: List[MsvcToolset] = field(default_factory=list)  # installed under Visual Studio
    cc: Optional[str] = None  # CC as set
    cxx: Optional[str] = None  # CXX as set
    cc_problem: Optional[str] = None  # "a folder" / "missing" when CC names no file
    cxx_problem: Optional[str] = None
    tcc: Optional[str] = None  # triton-windows' bundled TinyCC (triton/runtime/tcc/tcc.exe)
    #: Triton (triton-windows) gives its cache and temporary directories the \\?\ prefix, so its own
    #: paths are not limited to MAX_PATH (read from triton/runtime/cache.py: `normalize_path`).
    triton_long_paths: Optional[bool] = None
    #: How long the temporary directory Triton writes each kernel's files in is named (runtime/cache.py):
    #: 51 for `tmp.pid_<pid>_<uuid4>`, 12 for triton-windows 3.5.1's `tmp.<8 characters>`.
    triton_temp_dir: Optional[int] = None
    inductor_cl: Optional[InductorClCommand] = None
    #: The Visual C++ runtime DLLs torch's and Triton's DLLs load (windows-msvc-runtime-old).
    vc_runtime: List[RuntimeDll] = field(default_factory=list)
    #: The MSVC linker version that built torch's and Triton's own DLLs, read from their PE headers:
    #: "torch/lib/c10.dll" -> "14.42". The runtime they load must be at least that release.
    msvc_built: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class RocmInfo:
    """ROCm's toolchain where a ROCm torch finds it: `/opt/rocm`, `ROCM_PATH`, or pip's TheRock layout
    (`_rocm_sdk_core`, `_rocm_sdk_devel` in site-packages, no `/opt/rocm`); the `ld.lld` Triton's AMD
    backend links kernels with (its own search, read from the installed `backends/amd/compiler.py`)
    and the HIP headers AOTInductor compiles against (torch's `_find_rocm_home`, read from
    `torch/utils/cpp_extension.py`). probe/rocm.py."""

    rocm_path: Optional[str] = None  # ROCM_PATH
    rocm_home_env: Optional[str] = None  # ROCM_HOME
    opt_rocm: Optional[bool] = None  # /opt/rocm exists
    sdk_roots: List[str] = field(default_factory=list)  # _rocm_sdk_core / _rocm_sdk_devel found
    lld_env: Optional[str] = None  # TRITON_HIP_LLD_PATH
    #: Where the installed Triton's AMD backend looks for ld.lld, in its order ("$TRITON_HIP_LLD_PATH",
    #: "<backend>/llvm/bin/ld.lld", "/opt/rocm/llvm/bin/ld.lld", ...); empty: it links in process.
    lld_search: List[str] = field(default_factory=list)
    #: The backend links with the lld library (Triton 3.5+: `amd.link_hsaco`), needing no ld.lld.
    links_in_process: Optional[bool] = None
    lld: Optional[str] = None  # the ld.lld that search finds here; None: none
    lld_elsewhere: List[str] = field(default_factory=list)  # ld.lld files present that it does not search
    backend_source: Optional[str] = None  # the compiler.py read
    #: ROCM_HOME as torch's `_find_rocm_home` finds it (ROCM_HOME/ROCM_PATH, TheRock's `_rocm_sdk_core`
    #: from torch 2.13, `hipcc` on PATH, /opt/rocm), and how.
    rocm_home: Optional[str] = None
    rocm_home_how: Optional[str] = None
    torch_knows_sdk: Optional[bool] = None  # torch's _find_rocm_home looks for _rocm_sdk_core
    hip_runtime_h: Optional[str] = None  # <rocm_home>/include/hip/hip_runtime.h when present
    hip_headers_elsewhere: List[str] = field(default_factory=list)  # hip_runtime.h where torch does not look
    #: <rocm_home>/include/hipblas/hipblas.h when present: the math libraries' development headers, which
    #: TheRock ships apart from the core (its devel package, expanded by `rocm-sdk init`).
    hipblas_h: Optional[str] = None
    math_headers_elsewhere: List[str] = field(default_factory=list)  # hipblas.h where torch does not look
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class XpuInfo:
    """Intel XPU: what torch's XPU build and Triton's Intel backend need from the driver, read from
    files (probe/xpu.py): the Level Zero loader and GPU driver libraries and their versions, IGC, the
    Level Zero headers and the SYCL runtime Triton's Intel backend compiles its launcher with."""

    torch_xpu: Optional[str] = None  # torch.version.xpu, read from torch/version.py
    ze_loader: Optional[str] = None  # libze_loader.so.1 / ze_loader.dll
    ze_loader_version: Optional[str] = None  # from the file's name (libze_loader.so.1.21.9)
    ze_driver: Optional[str] = None  # libze_intel_gpu.so.1 / ze_intel_gpu64.dll
    ze_driver_version: Optional[str] = None
    igc: Optional[str] = None  # libigc.so.* / igc64.dll
    igc_version: Optional[str] = None
    driver_packages: Dict[str, str] = field(default_factory=dict)  # dpkg names -> versions (Linux)
    ze_headers: Optional[str] = None  # the level_zero/ze_api.h Triton's Intel backend would include
    ze_header_search: List[str] = field(default_factory=list)  # where it looks, in order
    sycl: Optional[str] = None  # how Triton's Intel backend finds SYCL: "icpx at ...", "intel-sycl-rt 2025.1"
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class PlatformInfo:
    """The platform the target interpreter runs on, in the terms its failures need (probe/platform.py):
    the paths that break `cl` or MAX_PATH, and the Windows, ROCm and XPU sections where they apply
    (None where they do not)."""

    system: str = ""  # the target's sys.platform
    machine: str = ""
    mac_version: Optional[str] = None  # platform.mac_ver() on macOS
    paths: List[PathFact] = field(default_factory=list)
    windows: Optional[WindowsInfo] = None
    rocm: Optional[RocmInfo] = None
    xpu: Optional[XpuInfo] = None
    duration_s: float = fact(0.0, key=False)  # how long reading all this took


@dataclass
class ExtensionLib:
    """One compiled library of an installed package that links torch's own libraries, read from its
    ELF and the package's metadata (probe/extensions.py): what it was built for, and what of that
    this torch lacks (extension-torch-mismatch, extension-gpu-arch-missing)."""

    path: str
    distribution: str = ""  # its package, PEP 503 spelling ("fbgemm-gpu-cpu")
    version: Optional[str] = None  # the package's version
    #: The package's `Requires-Dist` on torch, as written ("==2.8.0", ">=2.14.0"); None: no pin.
    torch_requirement: Optional[str] = None
    torch_needed: List[str] = field(default_factory=list)  # the torch libraries it links (DT_NEEDED)
    #: Of those, the ones torch's lib directory does not have: a CUDA build's libc10_cuda.so beside a
    #: CPU-only torch. The loader refuses the library ("cannot open shared object file").
    missing_libs: List[str] = field(default_factory=list)
    torch_symbols: int = 0  # the torch symbols it imports
    #: The first few of those no torch library (nor a library of its own package) exports: the
    #: loader refuses it with "undefined symbol: <the first>".
    missing_symbols: List[str] = field(default_factory=list)
    missing_count: int = 0  # how many there are in all
    cudart: Optional[str] = None  # the CUDA runtime major it links ("12" for libcudart.so.12)
    cuda_archs: List[str] = field(default_factory=list)  # its cubins ("sm_80", "sm_90a")
    ptx_archs: List[str] = field(default_factory=list)  # its PTX ("compute_90")
    error: Optional[str] = None  # why it could not be read


@dataclass
class ExtensionScan:
    """The compiled extensions of the installed packages that link torch (probe/extensions.py)."""

    libs: List[ExtensionLib] = field(default_factory=list)
    files: int = 0  # shared objects of installed packages looked at
    complete: bool = True  # False: the time budget ran out first (the rest is unread)
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class TritonImport:
    """One import of Triton's API in an installed package that the installed Triton cannot satisfy."""

    distribution: str
    version: Optional[str]
    path: str  # the importing file, relative to its site-packages directory
    line: int
    module: str  # "triton.ops.matmul_perf_model", "triton.language.extra"
    name: Optional[str] = None  # "libdevice" for `from ... import libdevice`; None for `import module`


@dataclass
class TritonImportScan:
    """The Triton imports of the installed packages that use Triton's API (probe/triton_imports.py)."""

    missing: List[TritonImport] = field(default_factory=list)  # what the installed Triton lacks
    packages: List[str] = field(default_factory=list)  # the packages read ("bitsandbytes 0.44.1")
    imports: int = 0  # imports of triton.* read in them
    complete: bool = True  # False: the time budget ran out first
    notes: List[str] = fact(default_factory=list, key=False)


@dataclass
class BisectState:
    """What a CompilerBisector left in the Inductor cache (probe/bisect_state.py): from torch 2.6 on,
    every torch.compile takes its backend from it (bisect-state-leftover)."""

    directory: str  # <inductor cache>/bisect: the bisector's state
    exists: bool = False
    status_file: Optional[str] = None  # its bisect_status.txt, when there
    backend: Optional[str] = None  # the stage it names: "eager", "aot_eager", "inductor"
    subsystem: Optional[str] = None  # the subsystem it disables within that backend, if any
    modified: Optional[str] = None  # when the status was last written (ISO, UTC)


@dataclass
class CublasInfo:
    """The cuBLAS wheel beside a CUDA torch, and the one torch's metadata pins (probe/cublas.py):
    cublas-pairing."""

    wheel: Optional[str] = None  # the distribution installed: "nvidia-cublas-cu12", "nvidia-cublas"
    installed: Optional[str] = None  # its version, e.g. "12.8.4.1"
    pinned: Optional[str] = None  # torch's Requires-Dist on it, e.g. "==12.8.4.1"; None: no pin


@dataclass
class CudaHeaderDir:
    """A directory of CUDA headers an nvcc compile would search (nvcc-headers-skew)."""

    path: str
    source: str  # "nvcc's own", "CUDA_HOME", "CPATH", "CPLUS_INCLUDE_PATH", ...
    runtime: Optional[str] = None  # CUDART_VERSION of its cuda_runtime_api.h, as "12.4"
    launch_args: Optional[int] = None  # how many arguments its crt/host_runtime.h's __cudaLaunch takes


@dataclass
class CudaHeadersInfo:
    """nvcc and the CUDA headers its compiles would find first (probe/cuda_headers.py)."""

    nvcc: Optional[str] = None
    nvcc_version: Optional[str] = None
    dirs: List[CudaHeaderDir] = field(default_factory=list)  # nvcc's own first, then the others in order


@dataclass
class PjrtPluginInfo:
    """The TPU PJRT plugin beside torch_xla, and the one torch_xla pins (probe/pjrt.py):
    xla-pjrt-plugin-skew."""

    distribution: Optional[str] = None  # "libtpu", "libtpu-nightly"
    version: Optional[str] = None
    pinned: Optional[str] = None  # torch_xla's Requires-Dist on it (its `tpu` extra), e.g. "==0.0.21"
    library_path: Optional[str] = None  # TPU_LIBRARY_PATH, when it names another libtpu.so


@dataclass
class Facts:
    """Every fact a rule reads, one section per component. Each section (and each field that differs
    from its section) declares the probe step that produces it (a probe module's `STEP`, in
    `probe.plan()`), what it costs, whether it is in a canary's key, its merge label and how preflight reads
    it without running anything (`core/declare.py`)."""

    python: PythonInfo = fact(probe="python", required=True, quick="python_h")
    #: None: torch is not installed for the target interpreter.
    torch: Optional[TorchInfo] = fact(None, probe="torch", required=True, quick="package:torch")
    triton: Optional[TritonInfo] = fact(None, probe="triton", required=True, quick="package:triton")
    cuda: CudaInfo = fact(default_factory=CudaInfo, probe="cuda", required=True,
                          quick="file:/proc/driver/nvidia/version")
    #: What Inductor's C++ backend uses.
    cxx: CompilerInfo = fact(default_factory=CompilerInfo, probe="cxx", required=True,
                             merge="C++ compiler", quick="compiler")
    #: What Triton builds its launcher with.
    cc: CompilerInfo = fact(default_factory=CompilerInfo, probe="cc", required=True,
                            merge="C compiler", quick="compiler")
    abi: AbiInfo = fact(default_factory=AbiInfo, probe="abi", cost="compile", required=True)
    xla: Optional[XlaInfo] = fact(None, probe="xla", required=True, order=2.5, quick="package:torch_xla")
    #: Distribution name -> version.
    packages: Dict[str, str] = fact(default_factory=dict, probe="packages")
    #: The relevant environment variables (core/envvars.py).
    env: Dict[str, str] = fact(default_factory=dict, probe="env", quick="env")
    #: What the live probe returned, raw.
    live: Optional[Dict[str, Any]] = fact(None, probe="live", cost="live", key=False)
    #: None: not probed (kb/cache_dir_*.py then look themselves).
    caches: Optional[CacheInfo] = fact(None, probe="caches")
    duration_s: float = fact(0.0, key=False)
    # --- GPU/CUDA catalog (cuda-toolkit-missing) ---
    toolkit: Optional[CudaToolkitInfo] = fact(None, probe="toolkit")  # None: not probed
    compile_settings: Optional[CompileSettingsInfo] = fact(None, probe="compile_settings")  # None: not probed
    #: None: not probed (no torch to compare them with).
    extensions: Optional[ExtensionScan] = fact(None, probe="extensions")
    #: None: not probed (no Triton to compare the packages' imports with).
    triton_imports: Optional[TritonImportScan] = fact(None, probe="triton_imports")
    #: None: not probed (no torch, or no Inductor cache directory known).
    bisect: Optional[BisectState] = fact(None, probe="bisect_state")
    #: None: no cuBLAS wheel and no pin on one (a CPU torch, or one using the system's CUDA).
    cublas: Optional[CublasInfo] = fact(None, probe="cublas")
    #: None: no nvcc (cuda-toolkit-missing says so).
    cuda_headers: Optional[CudaHeadersInfo] = fact(None, probe="cuda_headers")
    #: None: no torch_xla.
    pjrt: Optional[PjrtPluginInfo] = fact(None, probe="pjrt")
    # --- platforms (issue 36): Windows, ROCm, Intel XPU, macOS ---
    platform: Optional[PlatformInfo] = fact(None, probe="platform")  # None: not probed
    # --- compile caches across hosts and ranks (issue 40) ---
    cache_key: Optional[CacheKeyInfo] = fact(None, probe="cache_key")  # None: not probed
    #: Every remote compile cache configured here; empty: none.
    remote_caches: List[RemoteCacheInfo] = fact(default_factory=list, probe="remote_caches")
    shared_caches: Optional[SharedCacheInfo] = fact(None, probe="shared_caches")  # None: not probed
    # --- fleet (issue 41): compile-workers-oversubscribed ---
    resources: Optional[ResourceInfo] = fact(None, probe="resources", key=False)  # None: not probed

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Facts:
        """The inverse of `to_dict` (for cached or merged reports); unknown keys are ignored."""
        return _build(cls, d)

    @property
    def gpus(self) -> List[GPUInfo]:
        return self.cuda.gpus


def _build(cls: Any, d: Any) -> Any:
    """A dataclass from a dict, recursing into the nested fact sections by their type hints."""
    if d is None or not dataclasses.is_dataclass(cls) or not isinstance(d, Mapping):
        return d
    hints = typing.get_type_hints(cls)
    kwargs: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in d:
            continue
        kwargs[f.name] = _convert(hints.get(f.name), d[f.name])
    return cls(**kwargs)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union:  # Optional[X]
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin in (list, List) and args and dataclasses.is_dataclass(args[0]):
        return [_build(args[0], v) for v in value]
    if dataclasses.is_dataclass(hint):
        return _build(hint, value)
    return value
