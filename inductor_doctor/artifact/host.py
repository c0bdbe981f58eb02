"""The host's side of an artifact comparison: the probe's facts, plus what only files can answer.

Which of an artifact's torch symbols this torch's libraries export is looked up in their own hash
tables (probe/_elf.py: a millisecond each, never a scan of libtorch's 300k symbols); the CPU's
instruction sets are the kernel's flags in /proc/cpuinfo. A `plan` builds a `HostView` from the
planned stack instead, where only some of these are known.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

#: GCC's `-m<isa>` option → the /proc/cpuinfo flag of the same instruction set (x86). An option
#: that is not here (a tuning knob, or an ISA the kernel names differently and no kernel uses)
#: is not compared.
GCC_TO_CPUINFO: Dict[str, str] = {
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "sse4a": "sse4a",
    "popcnt": "popcnt", "avx": "avx", "avx2": "avx2", "fma": "fma", "f16c": "f16c", "bmi": "bmi1",
    "bmi2": "bmi2", "lzcnt": "abm", "movbe": "movbe", "aes": "aes", "pclmul": "pclmulqdq",
    "sha": "sha_ni", "adx": "adx", "rdseed": "rdseed", "rdrnd": "rdrand", "gfni": "gfni",
    "vaes": "vaes", "vpclmulqdq": "vpclmulqdq", "avx512f": "avx512f", "avx512dq": "avx512dq",
    "avx512bw": "avx512bw", "avx512vl": "avx512vl", "avx512cd": "avx512cd",
    "avx512ifma": "avx512ifma", "avx512vbmi": "avx512vbmi", "avx512vbmi2": "avx512_vbmi2",
    "avx512vnni": "avx512_vnni", "avx512bitalg": "avx512_bitalg",
    "avx512vpopcntdq": "avx512_vpopcntdq", "avx512bf16": "avx512_bf16", "avx512fp16": "avx512_fp16",
    "avxvnni": "avx_vnni", "amx-tile": "amx_tile", "amx-int8": "amx_int8", "amx-bf16": "amx_bf16",
    "amx-fp16": "amx_fp16", "avxifma": "avx_ifma", "xsave": "xsave", "xsavec": "xsavec",
    "xsaveopt": "xsaveopt", "clflushopt": "clflushopt", "clwb": "clwb", "fsgsbase": "fsgsbase",
}  # fmt: skip

#: Inductor's vector ISAs (AOTI_CPU_ISA words, torch/_inductor/cpu_vec_isa.py) → the flags each
#: needs, as torch's own x86 checker asks for them.
VEC_ISA_FLAGS: Dict[str, List[str]] = {
    "AVX2": ["avx2", "fma"],
    "AVX512": ["avx512f", "avx512dq", "avx512vl", "avx512bw"],
    "AVX512_VNNI": ["avx512_vnni"],
    "AMX_TILE": ["amx_tile"],
    "AMX": ["amx_tile", "amx_bf16", "amx_int8"],
    "NEON": ["asimd"],
    "SVE": ["sve"],
    "SVE256": ["sve"],
    "VSX": ["altivec"],
    "ZVECTOR": ["vxe"],
}


@dataclass
class HostView:
    """What an artifact is compared with: this host, or a planned stack (`planned=True`)."""

    torch_version: Optional[str] = None
    torch_git: Optional[str] = None
    torch_cuda: Optional[str] = None
    triton_version: Optional[str] = None
    torch_libs: List[str] = field(default_factory=list)  # libtorch*.so, libc10*.so to look symbols up in
    glibc: Optional[str] = None
    glibcxx: Optional[str] = None  # the newest GLIBCXX_ the loaded libstdc++ defines
    cxxabi: Optional[str] = None
    libstdcxx: Optional[str] = None  # its path
    platform: Optional[str] = None  # "linux"
    machine: Optional[str] = None  # "x86_64"
    cpu_flags: Optional[List[str]] = None  # None: unknown (a plan names no CPU)
    gpus: Dict[str, Optional[str]] = field(default_factory=dict)  # device → "9.0"
    planned: bool = False
    what: str = "this host"  # how reasons name it: "this host", "the planned stack"
    #: The compile stack's variables set here (`Facts.env`), and what a variable's value gives this
    #: torch's cache keys (probe/cache_key.py: `key_effect(name, value)`, None where it keys nothing);
    #: None for a planned stack, whose environment is not known.
    env: Dict[str, str] = field(default_factory=dict)
    key_effect: Optional[Callable[[str, Optional[str]], Optional[str]]] = None

    def missing_torch_symbols(self, names: List[str]) -> Optional[List[str]]:
        """The names none of this torch's libraries export; None when they cannot be read."""
        if not self.torch_libs:
            return None
        from inductor_doctor.probe._elf import ELF_ERRORS, SymbolIndex, open_elf

        missing = list(names)
        readable = False
        for lib in self.torch_libs:
            if not missing:
                break
            try:
                with open_elf(lib) as elf:
                    index = SymbolIndex(elf)
                    if not index.usable:
                        continue
                    readable = True
                    missing = [n for n in missing if not index.defines(n)]
            except ELF_ERRORS:
                continue
        return missing if readable else None


def cpu_flags(path: str = "/proc/cpuinfo") -> Optional[List[str]]:
    """The first CPU's flags (x86 `flags`, Arm `Features`); None where /proc/cpuinfo is not there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                key = line.split(":", 1)[0].strip().lower()
                if key in ("flags", "features"):
                    return sorted(set(line.split(":", 1)[1].split()))
    except OSError:
        return None
    return None


def torch_libraries(lib_dir: Optional[str]) -> List[str]:
    """torch's own shared libraries, the ones an AOTInductor `.so` links against."""
    if not lib_dir or not os.path.isdir(lib_dir):
        return []
    names = sorted(os.listdir(lib_dir))
    order = ("libtorch_cpu.so", "libc10.so", "libtorch.so", "libtorch_cuda.so", "libc10_cuda.so")
    found = [os.path.join(lib_dir, n) for n in order if n in names]
    return found


def host_view(facts: Any) -> HostView:
    """This host, from the probe's facts (`probe.facts.Facts`)."""
    torch, py = facts.torch, facts.python
    lib_dir = torch.lib_dir if torch is not None else None
    if torch is not None and not lib_dir and torch.path:
        lib_dir = os.path.join(torch.path, "lib")
    view = HostView(
        torch_version=torch.version if torch else None,
        torch_git=torch.git_version if torch else None,
        torch_cuda=torch.cuda if torch else None,
        triton_version=facts.triton.version if facts.triton else None,
        torch_libs=torch_libraries(lib_dir),
        glibc=py.glibc,
        glibcxx=py.libstdcxx_glibcxx_max,
        cxxabi=py.libstdcxx_cxxabi_max,
        libstdcxx=py.libstdcxx_path,
        platform=py.platform or None,
        machine=py.machine or None,
        cpu_flags=cpu_flags(),
        gpus={g.device: g.sm for g in facts.gpus},
        env=dict(facts.env),
    )
    from inductor_doctor.probe.cache_key import effect_here

    view.key_effect = lambda name, value: effect_here(facts, name, value)
    return view
