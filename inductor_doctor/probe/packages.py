"""Python, Triton and torch_xla facts from the target's answer (see `target.py`): no imports.

Distribution names are normalised as PEP 503 does (`Torch_XLA` → `torch-xla`), so that rules look
packages up by one spelling.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Optional

from inductor_doctor.core.facts import PythonInfo, TritonInfo, XlaInfo
from inductor_doctor.probe import loader
from inductor_doctor.probe._elf import ELF_ERRORS
from inductor_doctor.probe.step import Step

#: Distributions that provide the `triton` module, most common first.
TRITON_DISTRIBUTIONS = (
    "triton",
    "pytorch-triton",
    "pytorch-triton-rocm",
    "pytorch-triton-xpu",
    "triton-xpu",
    "triton-windows",
)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def packages(target: Dict[str, Any]) -> Dict[str, str]:
    raw = target.get("packages") or {}
    return {normalize(k): str(v) for k, v in sorted(raw.items())}


def python_info(python: str, target: Dict[str, Any]) -> PythonInfo:
    if "error" in target:
        return PythonInfo(executable=python, version="unknown", error=str(target["error"]))
    info = PythonInfo(
        executable=str(target.get("executable") or python),
        version=str(target.get("version") or "unknown"),
        implementation=str(target.get("implementation") or "cpython"),
        abiflags=str(target.get("abiflags") or ""),
        include_dir=target.get("include_dir"),
        has_python_h=target.get("has_python_h"),
        platform=str(target.get("platform") or ""),
        machine=str(target.get("machine") or ""),
        glibc=target.get("glibc"),
        site_packages=list(target.get("site_packages") or []),
        prefix=target.get("prefix"),
        base_prefix=target.get("base_prefix"),
        gil_disabled=target.get("gil_disabled"),
    )
    for key, err in sorted((target.get("errors") or {}).items()):
        info.notes.append(f"{key}: {err}")
    if info.has_python_h is False:
        info.notes.append(f"no Python.h in {info.include_dir} (install the python3-dev package)")
    if info.platform.startswith("linux"):
        path = loader.find_library("libstdc++.so.6", target)
        if path:
            info.libstdcxx_path = path
            try:
                info.libstdcxx_glibcxx_max, info.libstdcxx_cxxabi_max = loader.libstdcxx_versions(path)
            except ELF_ERRORS as exc:
                info.notes.append(f"cannot read {path} as ELF: {exc}")
        else:
            info.notes.append("no libstdc++.so.6 found (LD_LIBRARY_PATH, ldconfig cache, usual dirs)")
    return info


def triton_info(target: Dict[str, Any], pkgs: Dict[str, str]) -> Optional[TritonInfo]:
    path = (target.get("modules") or {}).get("triton")
    dist = next((name for name in TRITON_DISTRIBUTIONS if name in pkgs), None)
    if not path and not dist:
        return None
    info = TritonInfo(path=path, distribution=dist, version=pkgs.get(dist) if dist else None)
    if path and not dist:
        info.notes.append("a `triton` package is importable but no distribution claims it")
    if dist and not path:
        info.notes.append(f"the {dist} distribution is installed but no `triton` package is importable")
    if path and dist:
        _shadowing(info, (target.get("dist_paths") or {}).get(dist))
    if path:
        for rel in (("backends", "nvidia", "bin", "ptxas"), ("third_party", "cuda", "bin", "ptxas")):
            candidate = os.path.join(path, *rel)
            if os.path.exists(candidate):
                info.bundled_ptxas = candidate
                break
    return info


_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def _shadowing(info: TritonInfo, site: Optional[str]) -> None:
    """Whether `import triton` finds another copy before the installed distribution's own.

    The distribution's `triton/` lies next to its .dist-info (`site`); a copy elsewhere that the
    interpreter finds first (a stale tree on PYTHONPATH) is what every compile then runs. An
    editable install has no `triton/__init__.py` next to its metadata, so it is never taken for one.
    """
    if not site or not info.path:
        return
    own = os.path.join(site, "triton")
    if not os.path.isfile(os.path.join(own, "__init__.py")):
        return
    if os.path.realpath(own) == os.path.realpath(info.path):
        return
    info.shadowed_install = own
    try:
        with open(os.path.join(info.path, "__init__.py"), encoding="utf-8", errors="replace") as fh:
            m = _VERSION.search(fh.read(65536))
        info.imported_version = m.group(1) if m else None
    except OSError:
        pass
    info.notes.append(f"`import triton` finds {info.path}, not the installed {info.distribution} "
                      f"{info.version} in {own}")


def xla_info(target: Dict[str, Any], pkgs: Dict[str, str]) -> Optional[XlaInfo]:
    path = (target.get("modules") or {}).get("torch_xla")
    version = pkgs.get("torch-xla")
    if not path and not version:
        return None
    info = XlaInfo(version=version, path=path, pjrt_device=os.environ.get("PJRT_DEVICE"))
    if path:
        vpy = os.path.join(path, "version.py")
        try:
            from inductor_doctor.probe.torch_build import read_version_py

            info.version = read_version_py(vpy).get("__version__") or info.version
        except (OSError, SyntaxError, ValueError):
            pass
    else:
        info.notes.append(f"torch-xla {version} is installed but no `torch_xla` package is importable")
    if not info.pjrt_device:
        info.notes.append(
            "PJRT_DEVICE is not set: torch_xla picks a default device (TPU if present, else CPU)"
        )
    if "libtpu" in pkgs or "libtpu-nightly" in pkgs:
        info.notes.append(f"libtpu {pkgs.get('libtpu') or pkgs.get('libtpu-nightly')} is installed")
    return info


#: The target's installed distributions, by normalized name.
STEP = Step("packages", ("target",), packages, lambda m, known: {}, "packages")
