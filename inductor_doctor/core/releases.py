"""Real releases of the compile stack and what their files say, shipped as data so that `plan` works
offline and a rule can answer for a torch or Triton whose files it cannot read.

Everything here comes from `_data/releases.json`, a snapshot that `tools/release_audit.py refresh`
builds from PyPI: the final releases of torch, Triton and torch_xla, and for every torch and Triton
release from 2.0 on, the facts read from one Linux x86_64 wheel (its METADATA, a few source files,
and every bundled ptxas, run with `--version` and `--gpu-name`), with each file's sha256. Tables
derived from it cannot drift from it; `tools/release_audit.py check` (and the test suite) compares
the hand-written ones with it.

The snapshot is read on first use only: `list` and `explain` never parse it.
Keys are canonical distribution names (PEP 503: lower case, `-` for `_` and `.`).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from packaging.version import InvalidVersion, Version

SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "releases.json")

if TYPE_CHECKING:  # pragma: no cover - typing only; computed on first access (see __getattr__)
    #: Final releases per distribution, oldest first.
    RELEASES: Dict[str, Tuple[str, ...]]
    #: The Triton each Linux torch wheel requires (`Requires-Dist: triton...`), by torch release.
    TORCH_TRITON_PIN: Dict[str, str]
    #: When the snapshot was last refreshed from PyPI (shown in `plan` reports).
    RELEASES_AS_OF: str


@lru_cache(maxsize=1)
def snapshot() -> Dict[str, Any]:
    with open(SNAPSHOT, encoding="utf-8") as f:
        return json.load(f)


def _releases() -> Dict[str, Tuple[str, ...]]:
    return {name: tuple(versions) for name, versions in snapshot()["releases"].items()}


def _pins() -> Dict[str, str]:
    return {v: f["triton"] for v, f in snapshot()["torch"].items() if f.get("triton")}


_LAZY = {"RELEASES": _releases, "TORCH_TRITON_PIN": _pins, "RELEASES_AS_OF": lambda: snapshot()["as_of"]}


def __getattr__(name: str) -> Any:  # PEP 562: the tables are built on first access
    if name in _LAZY:
        value = _LAZY[name]()
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lookup(table: Mapping[str, Any], version: Optional[str]) -> Optional[Tuple[str, Dict[str, Any]]]:
    """(release, facts) for `version`: the release itself, else (a nightly, a pre-release, a patch
    release newer than the snapshot) the nearest release of the same X.Y line at or below it."""
    if not version:
        return None
    try:
        v = Version(Version(version).public)
    except InvalidVersion:
        return None
    if str(v) in table:
        return str(v), table[str(v)]
    line = [r for r in table if Version(r).release[:2] == v.release[:2]]
    if not line:
        return None
    below = [r for r in line if Version(r) <= v]
    best = max(below, key=Version) if below else min(line, key=Version)
    return best, table[best]


@lru_cache(maxsize=512)
def torch_release(version: Optional[str]) -> Optional[Tuple[str, Dict[str, Any]]]:
    """What the snapshot read from the torch release `version` is (or is closest to)."""
    return _lookup(snapshot()["torch"], version)


@lru_cache(maxsize=512)
def triton_release(version: Optional[str]) -> Optional[Tuple[str, Dict[str, Any]]]:
    return _lookup(snapshot()["triton"], version)


def ptxas_binary(sha256: Optional[str]) -> Optional[Dict[str, Any]]:
    """A bundled ptxas as run by the audit: {release, version, archs: {"sm_90a": true, ...}}."""
    return snapshot()["ptxas"].get(sha256 or "")


def ptxas_release_accepts(release: Optional[str], gpu_name: str) -> Optional[bool]:
    """Whether the bundled ptxas binaries of CUDA `release` ("12.8") accept `--gpu-name`; None
    when the snapshot has none of that release, or they disagree."""
    answers = {b["archs"].get(gpu_name) for b in snapshot()["ptxas"].values() if b["release"] == release}
    return answers.pop() if len(answers) == 1 else None


#: The Linux x86_64 driver each CUDA toolkit release shipped with: NVIDIA's CUDA Toolkit release
#: notes, table "CUDA Toolkit and Corresponding Driver Versions", "Toolkit Driver Version" column
#: (GA releases; https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/). Within a major
#: release, CUDA minor-version compatibility lets the `X.0` driver run what a later `X.y` toolkit
#: built (12.x: 525.60.13 and newer; 13.x: 580.65.06 and newer). From 13.4 on the toolkit no
#: longer bundles a Linux driver, so the notes list none.
CUDA_MIN_DRIVER: Dict[str, str] = {
    "11.7": "515.43.04",
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
    "13.1": "590.44.01",
    "13.2": "595.45.04",
    "13.3": "610.43.02",
}


def _driver_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def family_driver(cuda: str) -> Optional[str]:
    """The oldest driver that runs what CUDA `cuda` ("13.4") builds: its major release's `.0`."""
    return CUDA_MIN_DRIVER.get(f"{cuda.split('.')[0]}.0")


def cuda_of_driver(driver: Optional[str]) -> Optional[str]:
    """The newest CUDA release in the table whose toolkit driver is no newer than `driver`."""
    if not driver:
        return None
    try:
        have = _driver_tuple(driver)
    except ValueError:
        return None
    fits = [c for c, d in CUDA_MIN_DRIVER.items() if _driver_tuple(d) <= have]
    return max(fits, key=lambda c: tuple(int(p) for p in c.split("."))) if fits else None


#: `(sys_platform, platform_machine)` → the key of a platform's wheel facts in a torch release's
#: `pypi` entry of the snapshot.
_PLATFORM_KEYS = {
    ("linux", "x86_64"): "linux_x86_64", ("linux", "amd64"): "linux_x86_64",
    ("linux", "aarch64"): "linux_aarch64", ("linux", "arm64"): "linux_aarch64",
    ("win32", "amd64"): "win_amd64", ("win32", "x86_64"): "win_amd64",
}  # fmt: skip
_PLATFORM_NAMES = {"linux_x86_64": "Linux x86_64", "linux_aarch64": "Linux aarch64", "win_amd64": "Windows"}


def platform_key(sys_platform: str, machine: str) -> Optional[str]:
    return _PLATFORM_KEYS.get((sys_platform, machine.lower()))


@lru_cache(maxsize=1024)
def pypi_wheel(version: str, sys_platform: str, machine: str) -> Optional[Dict[str, Any]]:
    """What the snapshot read from the wheel PyPI serves for `version` on this platform: `build`
    (cpu | cuda), `cuda`, `archs`, `manylinux`, `pythons`, each with its source; None if unread."""
    key = platform_key(sys_platform, machine)
    found = torch_release(version)
    if key is None or found is None:
        return None
    return (found[1].get("pypi") or {}).get(key)


def pypi_build(version: str, sys_platform: str, machine: str) -> Optional[Tuple[str, Optional[str], str]]:
    """`(build, CUDA release, platform name)` of PyPI's wheel of `version` here, or None if unread."""
    wheel = pypi_wheel(version, sys_platform, machine)
    if not wheel or not wheel.get("build"):
        return None
    key = platform_key(sys_platform, machine) or ""
    return wheel["build"], wheel.get("cuda"), _PLATFORM_NAMES.get(key, key)


def variant_facts(version: str, tag: Optional[str], sys_platform: str,
                  machine: str) -> Optional[Dict[str, Any]]:
    """What the snapshot knows of one build of torch `version`: `build`, `cuda`, `archs` (as
    `torch.cuda.get_arch_list()` gives them) and `source`, with `variant` the index tag (`cu128`).

    `tag` None is the wheel PyPI serves here; `cpu` is the CPU build; `cuXXX` is PyPI's wheel when it
    is built with that CUDA (PyPI serves the same wheel as PyTorch's index for its default CUDA), else
    the index's variant as the build scripts at the release's tag set it (`index_variants`, Linux
    x86_64), else None: the snapshot did not read that variant.
    """
    wheel = pypi_wheel(version, sys_platform, machine)
    if tag is not None and tag.startswith("cpu"):
        return {"build": "cpu", "cuda": None, "archs": None, "variant": "cpu",
                "source": "a CPU-only build (no CUDA)"}
    if wheel is None or not wheel.get("build"):
        return None
    pypi_tag = "cpu" if wheel["build"] == "cpu" else "cu" + str(wheel.get("cuda") or "").replace(".", "")
    if tag is not None and tag != pypi_tag:
        found = index_variant(version, tag, sys_platform, machine)
        if found is None:
            return None
        archs = list(found.get("archs") or []) + list(found.get("ptx") or [])
        return {"build": "cuda", "cuda": found["cuda"], "archs": archs, "variant": tag,
                "source": found["source"]["archs"], "index_url": found.get("index_url")}
    return {"build": wheel["build"], "cuda": wheel.get("cuda"), "archs": wheel.get("archs"),
            "variant": pypi_tag, "source": f"{wheel.get('wheel')} on PyPI"}


def index_variants(version: str, sys_platform: str, machine: str) -> Dict[str, Dict[str, Any]]:
    """The CUDA variants PyTorch's index serves for the release `version` (Linux x86_64), as the
    audit read them from the build scripts at the release's tag: `cu126` → {cuda, archs, ptx,
    index_url, source}. Empty where the snapshot did not read them (see `index_variants_read`)."""
    if platform_key(sys_platform, machine) != "linux_x86_64":
        return {}
    found = torch_release(version)
    if found is None:
        return {}
    facts = found[1].get("index_variants") or {}
    return dict(facts.get("variants") or {}) if facts.get("read") else {}


def index_variant(version: str, tag: str, sys_platform: str, machine: str) -> Optional[Dict[str, Any]]:
    return index_variants(version, sys_platform, machine).get(tag.lower())


def cuda_tag(cuda: Optional[str]) -> Optional[str]:
    """`12.8` → `cu128`."""
    return "cu" + cuda.replace(".", "") if cuda else None
