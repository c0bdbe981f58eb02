"""Real release versions of the compile stack, shipped as data so that `plan` works offline.

`plan` resolves a range such as `torch>=2.4,<2.7` against these lists to decide whether *every*
version the range allows hits a known issue (`affected`) or only *some* do (`likely`). The lists
hold final releases only, as PyPI serves them (gathered with `pip index versions <name>` and the
wheels' own `Requires-Dist` metadata, 2026-11); pre-releases and nightlies are never enumerated,
but a pin to one (`torch==2.8.0.dev20250410`) is still judged exactly.

Refresh when a release ships: add it to `RELEASES`, and its Triton pin to `TORCH_TRITON_PIN`.
Keys are canonical distribution names (PEP 503: lower case, `-` for `_` and `.`).
"""

from __future__ import annotations

from typing import Dict, Tuple

#: When this table was last brought up to date (shown in `plan` reports).
RELEASES_AS_OF = "2026-11-22"

RELEASES: Dict[str, Tuple[str, ...]] = {
    "torch": (
        "1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.3.0", "1.3.1", "1.4.0", "1.5.0", "1.5.1",
        "1.6.0", "1.7.0", "1.7.1", "1.8.0", "1.8.1", "1.9.0", "1.9.1", "1.10.0", "1.10.1",
        "1.10.2", "1.11.0", "1.12.0", "1.12.1", "1.13.0", "1.13.1",
        "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1",
        "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1",
        "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0",
    ),
    "triton": (
        "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.3.1",
        "3.4.0", "3.5.0", "3.5.1", "3.6.0", "3.7.0", "3.7.1", "3.8.0", "3.9.0",
    ),
    "torch-xla": (
        "2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0", "2.8.0",
        "2.8.1", "2.9.0",
    ),
}  # fmt: skip

#: The Triton each Linux torch wheel requires (its `Requires-Dist: triton...` specifier). CPU-only
#: and non-Linux wheels require none. Missing entries are unknown, never guessed.
TORCH_TRITON_PIN: Dict[str, str] = {
    "2.0.0": "==2.0.0", "2.0.1": "==2.0.0",
    "2.1.0": "==2.1.0", "2.1.1": "==2.1.0", "2.1.2": "==2.1.0",
    "2.2.0": "==2.2.0", "2.2.1": "==2.2.0", "2.2.2": "==2.2.0",
    "2.3.0": "==2.3.0", "2.3.1": "==2.3.1",
    "2.4.0": "==3.0.0", "2.4.1": "==3.0.0",
    "2.5.0": "==3.1.0", "2.5.1": "==3.1.0",
    "2.6.0": "==3.2.0",
    "2.7.0": "==3.3.0", "2.7.1": "==3.3.1",
    "2.8.0": "==3.4.0",
    "2.9.0": "==3.5.0", "2.9.1": "==3.5.1",
    "2.10.0": "==3.6.0", "2.11.0": "==3.6.0",
    "2.12.0": "==3.7.0", "2.12.1": "==3.7.1",
    "2.13.0": "==3.7.1",
    "2.14.0": "~=3.8.0",
}  # fmt: skip

#: The oldest Linux driver each CUDA toolkit release needs without the compat package
#: (NVIDIA's CUDA Toolkit release notes, table "Toolkit Driver Version"), for hooks that
#: compare `--cuda` against `--driver`.
CUDA_MIN_DRIVER: Dict[str, str] = {
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
}
