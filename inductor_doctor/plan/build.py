"""Which torch build a plan installs: CPU-only, CUDA (which release), ROCm or XPU.

The same `torch==2.5.1` is a CPU-only wheel from PyTorch's CPU index, a CUDA 12.4 wheel from
PyPI on Linux x86_64, and a CPU/MPS wheel on macOS. A GPU issue cannot arise with a CPU-only build,
so `plan` decides the build before it asks any issue, from what pip itself would go by, strongest
first:

1. the local version label of a pinned torch (`torch==2.5.1+cpu`, `+cu128`, `+rocm6.2`);
2. the index pip reads torch from (`--index-url`, or `-i`/`--extra-index-url` in a requirements
   file): `https://download.pytorch.org/whl/cpu`, `.../whl/cu128`, `.../whl/nightly/rocm6.4`;
3. the platform's default wheel on PyPI, as the release snapshot read it from the wheels
   (`core/releases.pypi_build`): macOS wheels carry no CUDA, Windows ones none either, Linux aarch64
   ones none before the CUDA aarch64 wheels.

None means the plan does not say: a GPU build may be installed, and GPU issues are judged.
"""

from __future__ import annotations

import re
from typing import Mapping, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from inductor_doctor.core.plan_input import PlannedPackage

#: A PyTorch wheel index: `/whl/cpu`, `/whl/cu128`, `/whl/nightly/cu130`, `/whl/test/rocm6.4`, with
#: an optional trailing `/simple` or `/torch` page.
_INDEX = re.compile(
    r"/whl/(?:(?:nightly|test)/)?(?P<tag>cpu(?:[-_.][a-z0-9]+)?|cu\d{3}|rocm\d+(?:\.\d+)*|xpu)(?:/(?:simple|torch))?/*$",
    re.IGNORECASE,
)
_LOCAL = re.compile(r"^(?P<tag>cpu(?:[-_.][a-z0-9]+)?|cu\d{3}|rocm\d+(?:\.\d+)*|xpu)$", re.IGNORECASE)

#: (build, CUDA release "12.8" or None, what says so, the index tag "cu128" when the plan names one)
Build = Tuple[Optional[str], Optional[str], str, Optional[str]]


def from_tag(tag: str) -> Tuple[str, Optional[str]]:
    """`cpu` → ("cpu", None); `cu128` → ("cuda", "12.8"); `rocm6.2` → ("rocm", None)."""
    t = tag.lower()
    if t.startswith("cpu"):
        return "cpu", None
    if t.startswith("cu"):
        digits = t[2:]
        return "cuda", f"{int(digits[:-1])}.{digits[-1]}"
    if t.startswith("rocm"):
        return "rocm", None
    return "xpu", None


def index_tag(url: str) -> Optional[str]:
    """The build tag a PyTorch index URL serves (`cu128`), or None for any other index."""
    m = _INDEX.search(url.strip().split("?")[0].split("#")[0])
    return m.group("tag").lower() if m else None


def local_tag(version: str) -> Optional[str]:
    try:
        local = Version(version).local
    except InvalidVersion:
        return None
    return local if local and _LOCAL.match(local) else None


def planned_build(torch: Optional[PlannedPackage], index_urls: Sequence[str],
                  env: Mapping[str, str]) -> Build:
    """The build pip would install for the planned torch (see the module's docstring)."""
    if torch is None:
        return None, None, "", None
    tags = {local_tag(v) for v in torch.candidates} if torch.candidates else {None}
    if len(tags) == 1 and None not in tags:
        tag = tags.pop()
        assert tag is not None
        build, cuda = from_tag(tag)
        return build, cuda, torch.describe(), tag
    served = [(url, index_tag(url)) for url in index_urls]
    pytorch = [(url, tag) for url, tag in served if tag]
    if pytorch and len({tag for _, tag in pytorch}) == 1 and len(pytorch) == len(served):
        url, tag = pytorch[0]
        assert tag is not None
        build, cuda = from_tag(tag)
        return build, cuda, f"--index-url {url}", tag
    if served:
        return None, None, "", None  # several indexes, or one that is not PyTorch's: pip's choice
    return platform_default(torch, env)


def platform_default(torch: PlannedPackage, env: Mapping[str, str]) -> Build:
    """The build of the wheel PyPI serves this platform, as the release snapshot read it."""
    from inductor_doctor.core.releases import pypi_build

    system = env.get("sys_platform", "")
    if system == "darwin":
        return "cpu", None, "macOS (PyPI's torch for macOS has no CUDA: CPU and MPS only)", "cpu"
    builds = {pypi_build(v, system, env.get("platform_machine", "")) for v in torch.candidates}
    if not torch.candidates or len(builds) != 1:
        return None, None, "", None
    found = builds.pop()
    if found is None:
        return None, None, "", None
    build, cuda, where = found
    return build, cuda, f"{torch.describe()} from PyPI on {where}", None
