"""A GPU named on the command line rather than found here: `--gpu sm_80`, `--gpu 9.0`, `--gpu gfx942`.

`check --gpu` adds a column per such target, earned by the cross-target canary (`target/
cross_compile.py`: Triton and its assembler compile the canary kernels for that GPU, no GPU needed);
`plan --gpu` and `plan --suggest --gpu` describe the GPU of a stack that is not installed yet. This
module says what a name means, in Triton's own terms (`GPUTarget(backend, arch, warp_size)`), and
nothing about what the GPU can do: that is knowledge (`kb/`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence

from inductor_doctor.core.codes import UsageError

_SM = re.compile(r"^(?:sm|compute)?_?(\d{2,3})([af]?)$")
_DOTTED = re.compile(r"^(\d{1,2})\.(\d)$")
_GFX = re.compile(r"^gfx(\d{2,4}[0-9a-f]?)$")


@dataclass(frozen=True)
class GpuTarget:
    """One GPU to compile for. `name` is the column's label and a finding's device (`sm_80`,
    `gfx942`); `arch` is what Triton's `GPUTarget` takes (80, or "gfx942")."""

    backend: str  # "cuda" | "hip"
    name: str
    sm: Optional[int] = None  # 80 for sm_80; None for AMD
    gfx: Optional[str] = None  # "gfx942"

    @property
    def arch(self) -> str:
        return str(self.sm) if self.backend == "cuda" else str(self.gfx)

    @property
    def warp_size(self) -> int:
        """Triton's warp size for the target: 32 on NVIDIA and on RDNA (gfx10-12, wave32), 64 on
        GCN/CDNA (gfx9: MI100-MI355), as Triton's HIP driver reports it there."""
        if self.backend == "cuda":
            return 32
        return 64 if str(self.gfx).startswith("gfx9") else 32

    @property
    def spec(self) -> str:
        """What the cross-target canary is told ($INDUCTOR_DOCTOR_XTARGET): `cuda 80 32`."""
        return f"{self.backend} {self.arch} {self.warp_size}"

    @property
    def capability(self) -> Optional[str]:
        """`8.0` for sm_80, as nvidia-smi and the probe write it; None for AMD."""
        return f"{self.sm // 10}.{self.sm % 10}" if self.sm is not None else None


def parse_target(text: str) -> GpuTarget:
    """`sm_80`, `sm_90a`, `compute_86`, `80`, `8.6` (NVIDIA) or `gfx942`, `gfx90a`, `gfx1100` (AMD).
    A suffix (`sm_90a`) names the same GPU: Triton adds it itself where it applies."""
    t = (text or "").strip().lower()
    m = _SM.match(t)
    sm = int(m.group(1)) if m else None
    if sm is None:
        d = _DOTTED.match(t)
        sm = int(d.group(1)) * 10 + int(d.group(2)) if d else None
    if sm is not None:
        return GpuTarget("cuda", f"sm_{sm}", sm=sm)
    g = _GFX.match(t)
    if g:
        return GpuTarget("hip", t, gfx=t)
    raise UsageError(f"--gpu {text!r}: expected an NVIDIA compute capability such as sm_90 (or 9.0), or an "
                     "AMD architecture such as gfx942")


def parse_targets(texts: Sequence[str]) -> List[GpuTarget]:
    """Each `--gpu` once, in the order given (`--gpu sm_80 --gpu 8.0` is one target)."""
    out: List[GpuTarget] = []
    for text in texts:
        for part in str(text).split(","):
            if part.strip():
                target = parse_target(part)
                if target not in out:
                    out.append(target)
    return out


def is_target_device(device: str) -> bool:
    """Whether a finding's device is a described GPU (`sm_80`, `gfx942`) rather than one found here."""
    return bool(re.match(r"^(sm_\d{2,3}|gfx[0-9a-f]{3,5})$", device))
