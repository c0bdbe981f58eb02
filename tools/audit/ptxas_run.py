"""Ask a bundled ptxas what it is and which GPUs it knows, by running it.

The text "sm_70" inside CUDA 13's ptxas does not mean it accepts `--gpu-name sm_70` (it does not):
only running it tells. An empty PTX module (no kernels) is enough for ptxas to validate the
`--gpu-name` value; its `.target sm_50` is below every architecture asked about, which ptxas
allows, and `.version 6.0` is a PTX ISA every CUDA 12 and 13 ptxas reads.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

#: Every architecture asked about: Triton's floor (sm_70) and up, a few below it to show where
#: CUDA 13 stops, and for sm_90 and newer also the `a` form Triton passes (`sm_90a`).
ARCHS = (50, 52, 60, 61, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121)
MINIMAL_PTX = ".version 6.0\n.target sm_50\n.address_size 64\n"
TIMEOUT_S = 30.0
_VERSION = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_UNKNOWN_ARCH = re.compile(r"Value '[^']+' is not defined for option 'gpu-name'")


def names(archs=ARCHS) -> list:
    out = []
    for a in archs:
        out.append(f"sm_{a}")
        if a >= 90:
            out.append(f"sm_{a}a")
    return out


def version(path: Path) -> Dict[str, str]:
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
    m = _VERSION.search(out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"{path} --version: exit {out.returncode}: {out.stdout[-200:]}{out.stderr[-200:]}")
    return {"release": m.group(1), "version": m.group(2)}


def accepts(path: Path, gpu_name: str, workdir: Path) -> Optional[bool]:
    """True: assembled; False: "Value 'sm_XX' is not defined for option 'gpu-name'"."""
    ptx = workdir / "empty.ptx"
    if not ptx.exists():
        ptx.write_text(MINIMAL_PTX)
    out = subprocess.run([str(path), "--gpu-name", gpu_name, str(ptx), "-o", str(workdir / "out.cubin")],
                         capture_output=True, text=True, timeout=TIMEOUT_S)
    if out.returncode == 0:
        return True
    if _UNKNOWN_ARCH.search(out.stdout + out.stderr):
        return False
    raise RuntimeError(f"{path} --gpu-name {gpu_name}: exit {out.returncode}: {out.stderr.strip()[-300:]}")


def facts(path: Path) -> Dict[str, Any]:
    """{release, version, archs: {"sm_90": true, "sm_90a": true, ...}} for one ptxas binary."""
    if not os.access(path, os.X_OK):
        os.chmod(path, 0o755)
    out: Dict[str, Any] = version(path)
    with tempfile.TemporaryDirectory(prefix="ptxas-audit-") as tmp:
        out["archs"] = {name: accepts(path, name, Path(tmp)) for name in names()}
    return out
