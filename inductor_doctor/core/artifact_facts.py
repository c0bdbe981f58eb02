"""What a compiled artifact was built for, as read from its own files: the vocabulary of `--artifact`.

An AOTInductor package (`.pt2`), a `torch.compiler.save_cache_artifacts()` blob or an Inductor/Triton
cache directory each carry what they need from the host that loads them: a torch whose libtorch
exports the symbols their `.so` files call, a libstdc++ and glibc as new as the versions those
files name, a CPU with the vector ISA their kernels use, a GPU whose architecture has a cubin (or
PTX it can JIT). The readers (`artifact/*.py`) fill these in; the kb modules compare them with the
host's facts or a planned stack. Every field may be unknown (None or empty): unknown is never fine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class SharedObject:
    """One ELF file inside the artifact (a model `.so`, a kernel `.so`, a cubin)."""

    name: str  # its path inside the artifact
    size: int = 0
    kind: str = "so"  # so | cubin
    glibc: Optional[str] = None  # the newest GLIBC_ version it needs, "2.34"
    glibcxx: Optional[str] = None  # the newest GLIBCXX_ version it needs, "3.4.30"
    cxxabi: Optional[str] = None  # the newest CXXABI_ version it needs, "1.3.9"
    needed: List[str] = field(default_factory=list)  # DT_NEEDED
    #: The undefined dynamic symbols it expects torch's libraries (libtorch*, libc10*) to export.
    torch_symbols: List[str] = field(default_factory=list)
    compiler: Optional[str] = None  # from .comment: "GCC: (Debian 12.2.0-14) 12.2.0"
    #: The compiler's command line as recorded in its debug info (DW_AT_producer), when present.
    producer: Optional[str] = None
    isa_flags: List[str] = field(default_factory=list)  # the -m<isa> flags it was built with, "avx512f"
    march: Optional[str] = None  # -march=...
    cuda_archs: List[str] = field(default_factory=list)  # "sm_90" (cubin), from .nv_fatbin or e_flags
    ptx_archs: List[str] = field(default_factory=list)  # "compute_90" (PTX the driver can JIT)
    error: Optional[str] = None  # why it could not be read


@dataclass
class ArtifactFacts:
    path: str
    kind: str  # pt2 | cache-blob | cache-dir | unknown
    size: int = 0
    device: Optional[str] = None  # cpu | cuda | xpu | ...: what it targets
    #: What built it, where the artifact records it (a cache blob's entries, a Triton cache's metadata).
    torch_version: Optional[str] = None
    torch_git: Optional[str] = None
    triton_version: Optional[str] = None
    #: AOTInductor's own metadata: AOTI_CPU_ISA ("AVX512 AVX512_VNNI"), AOTI_COMPUTE_CAPABILITY ("90"),
    #: AOTI_PLATFORM, AOTI_MACHINE, AOTI_DEVICE_KEY.
    metadata: Dict[str, str] = field(default_factory=dict)
    cpu_isa: Optional[str] = None  # AOTI_CPU_ISA, or the ISA a cache's kernels were picked for
    compute_capability: Optional[str] = None  # "90": the GPU it was compiled on
    platform: Optional[str] = None  # "linux"
    machine: Optional[str] = None  # "x86_64"
    archive_version: Optional[str] = None  # the .pt2 archive spec version
    models: List[str] = field(default_factory=list)  # AOTInductor models in a package
    example_inputs: bool = False  # the package records sample inputs to run it with
    objects: List[SharedObject] = field(default_factory=list)
    #: A cache's entries by kind ("inductor": 3, "triton": 2, ...), and what keys them.
    entries: Dict[str, int] = field(default_factory=dict)
    #: The compile stack's variables (TORCH*, TRITON*, ...) the compiling process had set, as its entries'
    #: repro header records them (`os.environ['X'] = 'v'`); None: not recorded. What enters a cache key
    #: among them is compared with this host's (artifact-cache-foreign).
    compile_env: Optional[Dict[str, str]] = None
    #: Where each build fact came from ("torch_version": "cache blob entry 'aot_autograd'"), for the reason.
    sources: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    error: Optional[str] = None  # the artifact could not be read at all
    read_s: float = 0.0

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] or self.path

    def newest(self, attr: str) -> Optional[str]:
        """The newest version any of its objects needs (glibc, glibcxx, cxxabi)."""
        found = [getattr(o, attr) for o in self.objects if getattr(o, attr)]
        return max(found, key=version_key) if found else None

    def cuda_archs(self) -> List[str]:
        return sorted({a for o in self.objects for a in o.cuda_archs}, key=version_key)

    def ptx_archs(self) -> List[str]:
        return sorted({a for o in self.objects for a in o.ptx_archs}, key=version_key)

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def version_key(text: str) -> tuple:
    """ "3.4.30" > "3.4.9"; "sm_100" > "sm_90": the numbers, compared as numbers."""
    import re

    return tuple(int(n) for n in re.findall(r"\d+", text))
