"""Which ptxas a Triton wheel runs for which GPU, read from its own sources.

Triton has chosen its assembler four ways: `path_to_ptxas()` (2.0-2.3: `TRITON_PTXAS_PATH`, then
`third_party/cuda/bin/ptxas`), `_path_to_binary("ptxas")` (3.0-3.2), `get_ptxas(arch)` picking
`ptxas-blackwell` from some architecture on (3.3: `_path_to_binary`, whose variable is
`TRITON_{binary.upper()}_PATH`, i.e. `TRITON_PTXAS-BLACKWELL_PATH`), and `knobs.nvidia.ptxas` /
`ptxas_blackwell` (3.4+, `env_nvidia_tool`, which turns `-` into `_`). The extractors recognise
each shape and raise `Unreadable` on a new one.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional

FILES = (
    "triton/backends/nvidia/compiler.py",
    "triton/knobs.py",
    "triton/common/backend.py",
    "triton/compiler.py",
)
BIN_DIRS = ("triton/backends/nvidia/bin/", "triton/third_party/cuda/bin/")

Read = Callable[[str], Optional[str]]


class Unreadable(Exception):
    """A Triton source the audit reads has changed shape."""


_SWITCH = (
    re.compile(r"name = \"ptxas-blackwell\" if arch >= (\d+) else \"ptxas\""),  # 3.3
    re.compile(r"knobs\.nvidia\.ptxas_blackwell if arch >= (\d+) else knobs\.nvidia\.ptxas"),  # 3.6-3.8
    re.compile(r"if arch < (\d+):\s*return knobs\.nvidia\.ptxas\s*\n(?:\s*#[^\n]*\n)*"
               r"\s*return knobs\.nvidia\.ptxas_blackwell"),  # 3.9
)
_SUFFIX = re.compile(r"suffix = ['\"]a ?['\"] if capability (>=|==) 90")
_ENV_TEMPLATE = re.compile(r"f[\"']TRITON_\{binary\.upper\(\)(\.replace\('-', '_'\))?\}_PATH[\"']")


def bundled_ptxas(names: List[str]) -> Dict[str, str]:
    """{"ptxas": member, "ptxas-blackwell": member} for the assemblers the wheel ships."""
    out = {}
    for name in names:
        for d in BIN_DIRS:
            if name.startswith(d):
                base = name[len(d):]
                if base in ("ptxas", "ptxas-blackwell"):
                    out[base] = name
    return out


def env_name(read: Read, binary: str) -> str:
    """The variable that overrides `binary`, spelled as this release's code builds it."""
    if binary == "ptxas" and "TRITON_PTXAS_PATH" in (read("triton/compiler.py") or "") + (
            read("triton/common/backend.py") or ""):
        return "TRITON_PTXAS_PATH"  # 2.0-2.1 name it literally
    for name in ("triton/knobs.py", "triton/backends/nvidia/compiler.py", "triton/common/backend.py"):
        m = _ENV_TEMPLATE.search(read(name) or "")
        if m:
            spelled = binary.upper().replace("-", "_") if m.group(1) else binary.upper()
            return f"TRITON_{spelled}_PATH"
    raise Unreadable(f"no TRITON_*_PATH template for {binary}")


def blackwell_from(read: Read) -> Optional[int]:
    """The first architecture (e.g. 100) compiled with `ptxas-blackwell`; None if never."""
    src = read("triton/backends/nvidia/compiler.py") or ""
    for pattern in _SWITCH:
        m = pattern.search(src)
        if m:
            return int(m.group(1))
    if "ptxas_blackwell" in src or "ptxas-blackwell" in src:
        raise Unreadable("compiler.py picks ptxas-blackwell in a form the audit does not know")
    return None


def arch_suffix(read: Read) -> Optional[str]:
    """When Triton appends `a` to `--gpu-name` (`sm_90a`): `>=90`, `==90`, or None (never)."""
    m = _SUFFIX.search(read("triton/backends/nvidia/compiler.py") or "")
    return f"{m.group(1)}90" if m else None


def from_metadata(meta: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {"requires_python": None}
    for line in meta.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key == "Requires-Python":
            out["requires_python"] = value.strip()
    return out


def extract(read: Read, meta: str, names: List[str]) -> Dict[str, Any]:
    facts = from_metadata(meta)
    bins = bundled_ptxas(names)
    if "ptxas" not in bins:
        raise Unreadable("the wheel bundles no ptxas")
    switch = blackwell_from(read)
    if (switch is None) != ("ptxas-blackwell" not in bins):
        raise Unreadable("ptxas-blackwell is shipped but never picked, or picked but not shipped")
    facts["ptxas"] = {"member": bins["ptxas"], "env": env_name(read, "ptxas")}
    facts["ptxas_blackwell"] = None
    if switch is not None:
        facts["ptxas_blackwell"] = {"member": bins["ptxas-blackwell"], "from_arch": switch,
                                    "env": env_name(read, "ptxas-blackwell")}
    facts["arch_suffix"] = arch_suffix(read)
    return facts
