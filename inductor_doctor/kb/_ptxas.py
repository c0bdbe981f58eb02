"""Which ptxas Triton runs for a GPU, and what that ptxas knows, read from the files themselves.

Triton picks its assembler per architecture: `TRITON_PTXAS_PATH`, else its bundled `ptxas`; and
since Triton 3.3, for sm_100 and newer, a second bundled `ptxas-blackwell` (a newer CUDA release)
overridden by `TRITON_PTXAS_BLACKWELL_PATH` (3.3 spelled it `TRITON_PTXAS-BLACKWELL_PATH`), which
`TRITON_PTXAS_PATH` does not affect. The release string and the accepted `--gpu-name` values are
plain text inside the executable, so nothing is run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from inductor_doctor.kb._catalog import file_contains, triton_source

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.probe.facts import Facts

_RELEASE = re.compile(rb"Cuda compilation tools, release (\d+\.\d+)")
_BLACKWELL_SWITCH = re.compile(r"[\"'](ptxas[-_]blackwell)[\"']\s+if\s+arch\s*>=\s*(\d+)")
BLACKWELL_ENVS = ("TRITON_PTXAS_BLACKWELL_PATH", "TRITON_PTXAS-BLACKWELL_PATH")


@dataclass(frozen=True)
class Ptxas:
    path: Optional[str]
    release: Optional[str]  # "12.4"
    source: str  # "TRITON_PTXAS_PATH", "bundled ptxas", "bundled ptxas-blackwell", ...


def release_of(path: Optional[str], chunk: int = 1 << 20) -> Optional[str]:
    """The CUDA release a ptxas executable reports in `--version`, read from its bytes."""
    if not path:
        return None
    carry = b""
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(chunk)
                if not block:
                    return None
                data = carry + block
                m = _RELEASE.search(data)
                if m:
                    return m.group(1).decode()
                carry = data[-64:]
    except OSError:
        return None


def _blackwell_from(facts: Facts) -> Optional[int]:
    """The architecture from which this Triton switches to its Blackwell ptxas, if it has one."""
    src = triton_source(facts, "backends", "nvidia", "compiler.py") or ""
    m = _BLACKWELL_SWITCH.search(src)
    if m:
        return int(m.group(2))
    if "ptxas_blackwell" in src:  # Triton >= 3.4 goes through knobs.nvidia.ptxas_blackwell
        return 100
    return None


def ptxas_for(facts: Facts, arch: Optional[int] = None) -> Ptxas:
    """The ptxas Triton runs for a GPU of architecture `arch` (e.g. 120); None: the default one."""
    t = facts.triton
    if t is None or not t.path:
        return Ptxas(None, None, "triton not installed")
    bindir = os.path.join(t.path, "backends", "nvidia", "bin")
    switch = _blackwell_from(facts)
    if arch is not None and switch is not None and arch >= switch:
        for name in BLACKWELL_ENVS:
            if facts.env.get(name):
                path = facts.env[name]
                return Ptxas(path, release_of(path), name)
        for name in ("ptxas-blackwell", "ptxas_blackwell"):
            path = os.path.join(bindir, name)
            if os.path.isfile(path):
                return Ptxas(path, release_of(path), f"bundled {name}")
    env = facts.env.get("TRITON_PTXAS_PATH")
    if env:
        return Ptxas(env, release_of(env) or _known(facts, env), "TRITON_PTXAS_PATH")
    path = t.bundled_ptxas or os.path.join(bindir, "ptxas")
    if os.path.isfile(path):
        return Ptxas(path, _known(facts, path) or release_of(path), "bundled ptxas")
    return Ptxas(None, None, "no ptxas found in triton")


def _known(facts: Facts, path: str) -> Optional[str]:
    """The release the probe already read for this path, if it did."""
    if facts.cuda.ptxas_path == path and facts.cuda.ptxas_version:
        return facts.cuda.ptxas_version
    t = facts.triton
    if t is not None and t.bundled_ptxas == path and t.bundled_ptxas_version:
        return t.bundled_ptxas_version
    return None


def knows_arch(ptxas: Ptxas, arch: int) -> Optional[bool]:
    """Whether the executable carries `sm_<arch>` among its strings; None when unreadable."""
    return file_contains(ptxas.path, f"sm_{arch}".encode())
