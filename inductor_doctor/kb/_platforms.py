"""Which rows the doctor decides on each platform its checks were not all written for, and how.

Most rules read a Linux toolchain (g++/clang, ELF, glibc, /proc) and NVIDIA's stack (nvidia-smi,
libcuda.so, ptxas). On Windows, macOS, a ROCm build of torch (whose GPUs torch still calls `cuda`)
or an Intel XPU build, a row such a rule fills would read as health it never looked at. This table
says, per platform and row, what the row's verdict stands on there:

* `rule`: the row's rule reads this platform's facts (or says itself why it does not apply);
* `canary`: the row's canary runs here for real (a CPU compile with `cl` on Windows), and decides;
* `linux`: a ROCm or XPU build on Linux: the row's rule and canary read this Linux machine as they
  would for any torch;
* `not-checked`: nothing reads this platform's side of the row: the row is `inconclusive`, "not
  checked on <platform>: <why>", whatever a Linux rule would have said, never `ok`;
* `cannot-arise`: the cause does not exist on the platform (no libstdc++ in an MSVC build): the
  row is `not-applicable`, with why.

`gate(issue_id, devices, rule)` wraps a built-in issue's rule with its row of this table
(`kb/_builtin.py` builds every built-in issue so); `coverage(facts)` is the whole table for the
platform found, which `platform-not-covered` lists, with the areas no row covers at all. A row the
table does not name takes its platform's default for its devices: on Windows and macOS every rule is
`not-checked` until someone reads it for that platform; on a ROCm build the GPU rows are
`not-checked`, the CPU and toolchain ones (Linux) keep their rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.model import Basis, DeviceKind, RuleOutcome, Status

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

WINDOWS, MACOS, ROCM, XPU = "Windows", "macOS", "ROCm", "Intel XPU"
RULE, CANARY, LINUX, NOT_CHECKED, CANNOT_ARISE = "rule", "canary", "linux", "not-checked", "cannot-arise"
#: When two platforms meet (TheRock ROCm on Windows, XPU on Windows), the stricter word wins.
_STRICTNESS = {CANNOT_ARISE: 4, NOT_CHECKED: 3, CANARY: 2, RULE: 1, LINUX: 0}

_LINUX_TOOLCHAIN = "reads a Linux toolchain (g++/clang, ELF, glibc); nothing reads its Windows side"
_NVIDIA_ON_ROCM = ("the GPU rows read NVIDIA's driver (nvidia-smi); this torch's `cuda` devices are AMD "
                   "GPUs, which nothing lists")

#: platform -> issue id -> (how the row is decided there, why). Ids not named take `_default`.
COVERAGE: Dict[str, Dict[str, Tuple[str, str]]] = {
    WINDOWS: {
        "block-mask-cpu": (CANARY, "its canary compiles for the CPU with Inductor's own compiler (cl)"),
        "cxx-compiler-missing": (CANARY, "its canary runs Inductor's CPU compile with cl for real"),
        "view-dtype-align": (CANARY, "its canary compiles a Triton kernel on the GPU"),
        "triton-constexpr-dynamic": (CANARY, "its canary compiles a Triton kernel on the GPU"),
        "cache-dir-noexec": (CANNOT_ARISE, "noexec is a POSIX mount option; Windows has none"),
        "cache-dir-unwritable": (NOT_CHECKED, "os.access on Windows reads the read-only attribute only, not "
                                 "the ACLs or Controlled Folder Access that refuse a write"),
        "clang-on-linux": (RULE, "its rule says it is Linux's"),
        "compile-bypassed": (RULE, "environment variables and start-up files, read the same way"),
        "compile-cache-stale": (NOT_CHECKED, "the scan reads ELF shared objects; Windows' caches hold PE "
                                ".pyd files"),
        "compile-workers-fail": (RULE, "its rule says the /dev/shm cause is Linux's"),
        "compiler-too-old": (NOT_CHECKED, "reads GCC's and clang's versions; an old MSVC is "
                             "msvc-not-activated's"),
        "const-data-ptr-abi": (CANNOT_ARISE, "a clang >= 18 Itanium-ABI mangling against a GCC-built "
                               "libtorch; Windows' torch and cl use MSVC's ABI"),
        "cuda-devices-hidden": (RULE, "nvidia-smi and CUDA_VISIBLE_DEVICES, read the same way"),
        "cuda-driver-too-old": (RULE, "the driver version from nvidia-smi, read the same way"),
        "cuda-libs-shadowed": (NOT_CHECKED, "reads the ELF loader's search (RPATH, LD_LIBRARY_PATH); Windows "
                               "finds DLLs by its own search order"),
        "cuda-toolkit-missing": (NOT_CHECKED, "looks for nvcc and cuda_runtime.h as Linux lays them out"),
        "gpu-too-old-for-triton": (RULE, "the GPU's capability from nvidia-smi"),
        "libcuda-not-found": (NOT_CHECKED, "reads libcuda.so's loader search; Triton on Windows loads "
                              "nvcuda.dll"),
        "libstdcxx-too-old": (RULE, "its rule says GLIBCXX versions are Linux's"),
        "openmp-headers-missing": (NOT_CHECKED, "compiles omp.h with g++/clang; cl's /openmp is built in, "
                                   "clang-cl's libomp is not read"),
        "ptxas-unsupported-arch": (NOT_CHECKED, "runs ptxas as Linux names it; triton-windows ships "
                                   "ptxas.exe"),
        "python-headers-missing": (RULE, "Python.h in the target's include directory, read the same way"),
        "python-unsupported-by-dynamo": (RULE, "Python's and torch's versions"),
        "small-gpu-no-autotune-gemm": (RULE, "the GPU's multiprocessors, from the live probe"),
        "torch-cpu-only-build": (RULE, "torch's build and nvidia-smi's GPUs"),
        "torch-gpu-arch-missing": (RULE, "torch's arch list and the GPU's capability"),
        "torch-missing": (RULE, "the target's packages"),
        "triton-missing": (RULE, "the target's packages (triton-windows included)"),
        "triton-no-c-compiler": (NOT_CHECKED, "looks for gcc/clang/cc; triton-windows uses CC, an activated "
                                 "MSVC or its bundled TinyCC, which msvc-not-activated reads"),
        "triton-ptxas-driver": (NOT_CHECKED, "runs ptxas as Linux names it; triton-windows ships ptxas.exe"),
        "triton-shared-memory": (RULE, "the GPU's shared memory, from the live probe"),
        "triton-version-skew": (RULE, "torch's pin and the installed Triton's version"),
        "xla-donor-hash": (RULE, "torch_xla's packages (there is no Windows build of torch_xla)"),
        "xla-torch-skew": (RULE, "torch_xla's packages (there is no Windows build of torch_xla)"),
    },
    MACOS: {
        "block-mask-cpu": (CANARY, "its canary compiles for the CPU with Inductor's own compiler"),
        "cxx-compiler-missing": (CANARY, "its canary runs Inductor's CPU compile for real"),
        "cache-dir-noexec": (NOT_CHECKED, "reads /proc/self/mounts, which macOS does not have"),
        "cache-dir-unwritable": (RULE, "os.access, read the same way"),
        "clang-on-linux": (RULE, "its rule says clang is macOS's default"),
        "compile-bypassed": (RULE, "environment variables and start-up files, read the same way"),
        "compile-cache-stale": (NOT_CHECKED, "the scan reads ELF shared objects; macOS's are Mach-O"),
        "compile-workers-fail": (RULE, "its rule says the /dev/shm cause is Linux's"),
        "compiler-too-old": (RULE, "clang's version, as the compiler answers"),
        "const-data-ptr-abi": (NOT_CHECKED, "reads ELF symbols of libtorch_cpu.so; macOS's is a Mach-O "
                               ".dylib"),
        "libstdcxx-too-old": (RULE, "its rule says GLIBCXX versions are Linux's"),
        "openmp-headers-missing": (RULE, "Apple clang and Homebrew's libomp, compiled for real"),
        "python-headers-missing": (RULE, "Python.h in the target's include directory"),
        "python-unsupported-by-dynamo": (RULE, "Python's and torch's versions"),
        "torch-missing": (RULE, "the target's packages"),
        "triton-missing": (RULE, "no Triton is built for macOS: its rule reads the packages"),
        "triton-version-skew": (RULE, "torch's pin and the installed Triton's version"),
    },
    ROCM: {
        "cuda-driver-too-old": (CANNOT_ARISE, "NVIDIA's driver is not in a ROCm torch's path; the ROCm "
                                "runtime's pairing is not covered (see platform-not-covered)"),
        "cuda-libs-shadowed": (CANNOT_ARISE, "a ROCm torch loads no nvidia-* wheels"),
        "cuda-toolkit-missing": (CANNOT_ARISE, "AOTInductor on ROCm needs the HIP headers: "
                                 "rocm-toolchain-layout reads them"),
        "libcuda-not-found": (CANNOT_ARISE, "Triton's AMD backend loads libamdhip64, not libcuda: "
                              "rocm-toolchain-layout reads where"),
        "ptxas-unsupported-arch": (CANNOT_ARISE, "Triton's AMD backend runs no ptxas (unless a CUDA build of "
                                   "Triton replaced pytorch-triton-rocm: triton-version-skew)"),
        "triton-ptxas-driver": (CANNOT_ARISE, "Triton's AMD backend runs no ptxas"),
        "torch-cpu-only-build": (CANNOT_ARISE, "torch is a ROCm build, not a CPU-only one"),
        "triton-missing": (RULE, "the target's packages (pytorch-triton-rocm included)"),
        "triton-no-c-compiler": (RULE, "Triton's AMD backend builds its launcher with the same C compiler"),
    },
    XPU: {},
}

#: What no row covers at all, per platform: said by platform-not-covered.
UNCOVERED: Dict[str, Tuple[str, ...]] = {
    WINDOWS: (
        "the Windows SDK's ucrt headers and libraries triton-windows links with (\"Failed to find Windows "
        "SDK\")",
        "Python's libs\\python3X.lib a launcher links against (\"Failed to find Python libs\", embedded "
        "Pythons)",
        "antivirus or Controlled Folder Access locking files in the caches",
    ),
    MACOS: (
        "the MPS device (Inductor's Metal backend): no row and no canary run there",
    ),
    ROCM: (
        "the ROCm runtime and amdgpu driver against torch's HIP version",
        "the gfx targets of the torch build and of Triton's AMD backend against the GPU",
        "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, and AMD GPUs' LDS limit",
    ),
    XPU: (
        "the xpu device itself: no canary compiles there",
        "the driver release Intel validated for each torch-xpu release (xpu-driver-pairing reads what is "
        "installed, not a table of validated pairs)",
    ),
}


@dataclass(frozen=True)
class Row:
    issue: str
    how: str  # RULE | CANARY | NOT_CHECKED | CANNOT_ARISE
    why: str
    platform: str


def platforms_of(facts: Facts) -> Tuple[List[str], str]:
    """(the platforms found that the checks are not all written for, how each was told)."""
    torch = facts.torch
    version = (torch.version or "") if torch is not None else ""
    local = version.partition("+")[2].lower()
    system = (facts.python.platform or "").lower()
    found: List[str] = []
    how: List[str] = []
    if system.startswith("win"):
        found.append(WINDOWS)
        how.append(f"this interpreter runs on Windows (sys.platform {system!r})")
    elif system == "darwin":
        found.append(MACOS)
        mac = facts.platform.mac_version if facts.platform is not None else None
        how.append(f"this interpreter runs on macOS{' ' + mac if mac else ''} (sys.platform {system!r})")
    if torch is not None and (torch.hip or local.startswith("rocm")):
        found.append(ROCM)
        how.append(f"torch {version} is a ROCm build (HIP {torch.hip or local[4:] or '?'})")
    if local.startswith("xpu"):
        found.append(XPU)
        how.append(f"torch {version} is an Intel XPU build")
    return found, "; ".join(how)


def _default(platform: str, devices: Sequence[DeviceKind]) -> Tuple[str, str]:
    if DeviceKind.XLA in devices:
        return (LINUX if platform in (ROCM, XPU) else RULE), "torch_xla's packages, read the same way"
    if platform in (WINDOWS, MACOS):
        return NOT_CHECKED, f"its rule {_LINUX_TOOLCHAIN.split('; ')[0]}; not read for {platform}"
    if platform == ROCM and DeviceKind.CUDA in devices:
        return NOT_CHECKED, _NVIDIA_ON_ROCM
    return LINUX, "this Linux machine, read as for any torch"


def row(issue_id: str, devices: Sequence[DeviceKind], platform: str) -> Row:
    how, why = COVERAGE.get(platform, {}).get(issue_id) or _default(platform, devices)
    return Row(issue_id, how, why, platform)


def strictest(issue_id: str, devices: Sequence[DeviceKind], platforms: Sequence[str]) -> Optional[Row]:
    """The row of the strictest of `platforms` for this issue; None on a platform the checks are
    written for."""
    rows = [row(issue_id, devices, p) for p in platforms]
    return max(rows, key=lambda r: _STRICTNESS[r.how]) if rows else None


#: The issues that read a platform themselves, and theirs (`platform-not-covered` lists the others).
OWN_RULES: Dict[str, str] = {
    "windows-long-paths": WINDOWS, "windows-path-characters": WINDOWS, "msvc-not-activated": WINDOWS,
    "compiler-output-encoding": WINDOWS, "rocm-toolchain-layout": ROCM, "xpu-driver-pairing": XPU,
    "windows-msvc-runtime-old": WINDOWS,
}
ME = "platform-not-covered"

Rule = Callable[["Facts"], Sequence[RuleOutcome]]


def gate(issue_id: str, devices: Sequence[DeviceKind], rule: Optional[Rule]) -> Optional[Rule]:
    """`rule` with this table in front of it: on a platform where the row is not checked or cannot
    arise, the row says so instead of what a rule written for Linux would say; elsewhere the rule
    itself (none: no outcome, as before). The issues that read the platforms themselves are left
    as they are."""
    if issue_id in OWN_RULES or issue_id == ME:
        return rule

    def gated(facts: Facts) -> Sequence[RuleOutcome]:
        found, _how = platforms_of(facts)
        r = strictest(issue_id, devices, found)
        if r is not None and r.how == NOT_CHECKED:
            return [RuleOutcome(Status.INCONCLUSIVE, f"not checked on {r.platform}: {r.why}", Basis.STATIC)]
        if r is not None and r.how == CANNOT_ARISE:
            return [RuleOutcome(Status.NOT_APPLICABLE, f"cannot arise on {r.platform}: {r.why}",
                                Basis.STATIC)]
        return list(rule(facts)) if rule is not None else []

    gated.__doc__ = rule.__doc__ if rule is not None else None
    gated.__wrapped__ = rule  # type: ignore[attr-defined]
    return gated


def coverage(facts: Facts, issues: Mapping[str, Sequence[DeviceKind]]) -> Dict[str, List[Row]]:
    """For each way a row is decided on the platforms found, the rows so decided."""
    found, _how = platforms_of(facts)
    out: Dict[str, List[Row]] = {RULE: [], CANARY: [], LINUX: [], NOT_CHECKED: [], CANNOT_ARISE: []}
    for issue_id, devices in sorted(issues.items()):
        if issue_id == ME:
            continue
        if issue_id in OWN_RULES:
            own = OWN_RULES[issue_id]
            how = RULE if own in found else CANNOT_ARISE
            out[how].append(Row(issue_id, how, f"{own}'s own", own))
            continue
        r = strictest(issue_id, devices, found)
        if r is not None:
            out[r.how].append(r)
    return out
