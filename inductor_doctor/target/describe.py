"""What the target interpreter says about itself: run by the target, never imported by the doctor.

The target may be another venv, another Python version, or not Python at all. This script imports
none of the target's packages: it reads `sys`, `sysconfig`, `importlib.metadata` and
`importlib.util.find_spec` of top-level names (which locates a package without executing it), and
prints one JSON line after a marker, so that a noisy `sitecustomize` cannot corrupt the answer.
Python 3.8 syntax and the standard library only.
"""

import json
import os
import platform
import sys
import sysconfig

MARKER = "@@INDUCTOR_DOCTOR_TARGET@@"
#: Top-level packages whose location we want (found, never imported).
PACKAGES = ("torch", "triton", "torch_xla", "nvidia")


def _unshadow():
    """Neither this folder nor the directory the doctor runs in may shadow the target's packages."""
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") in (here, os.getcwd()):
        del sys.path[0]


def _site():
    import site

    paths = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: None)()
    if user and getattr(site, "ENABLE_USER_SITE", False) and user not in paths:
        paths.append(user)
    for p in (sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")):
        if p and p not in paths:
            paths.append(p)
    return paths


def _glibc():
    try:
        v = os.confstr("CS_GNU_LIBC_VERSION")
        if v:
            return v.split()[-1]
    except (AttributeError, ValueError, OSError):
        pass
    lib, ver = platform.libc_ver()
    return ver if lib == "glibc" and ver else None


#: Distributions whose sys.path entry is reported: a package of the same name that imports from
#: elsewhere (a stale copy on PYTHONPATH) shadows the installed one.
LOCATED = ("torch", "torch-xla", "triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu",
           "triton-xpu", "triton-windows")
_DIST_AT = {}


def _dists():
    """Every distribution on sys.path, name -> version; the first hit along sys.path wins.

    The wheel spec names the directory `{name}-{version}.dist-info`, so a directory listing gives
    name and version without parsing ~100 METADATA files; anything else (egg-info, odd names) is
    read the slow way.
    """
    from importlib import metadata

    found = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for n in names:
            if not n.endswith((".dist-info", ".egg-info")):
                continue
            parts = n.rsplit(".", 1)[0].split("-")
            if n.endswith(".dist-info") and len(parts) == 2 and parts[1][:1].isdigit():
                name, version = parts
            else:
                try:
                    d = metadata.Distribution.at(os.path.join(entry, n))
                    name, version = d.metadata["Name"], d.version
                except Exception:
                    continue
                if not name or not version:
                    continue
            key = name.lower().replace("_", "-").replace(".", "-")
            if key not in found:
                found[key] = version
                if key in LOCATED:
                    _DIST_AT[key] = entry or "."
    return found


def _requires(dist):
    from importlib import metadata

    try:
        return metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return None


def _spec(name):
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    locs = list(spec.submodule_search_locations or [])
    if locs:
        return locs[0]
    return os.path.dirname(spec.origin) if spec.origin else None


def _include_dir():
    return sysconfig.get_paths().get("include") or sysconfig.get_config_var("INCLUDEPY")


def describe():
    out = {}

    def guard(key, fn):
        try:
            out[key] = fn()
        except Exception as exc:
            out.setdefault("errors", {})[key] = f"{type(exc).__name__}: {exc}"

    guard("executable", lambda: sys.executable)
    guard("version", lambda: "{}.{}.{}".format(*sys.version_info[:3]))
    guard("version_full", lambda: sys.version)
    guard("implementation", lambda: sys.implementation.name)
    guard("abiflags", lambda: getattr(sys, "abiflags", ""))
    guard("gil_disabled", lambda: bool(sysconfig.get_config_var("Py_GIL_DISABLED")))
    guard("platform", lambda: sys.platform)
    guard("machine", platform.machine)
    guard("prefix", lambda: sys.prefix)
    guard("base_prefix", lambda: getattr(sys, "base_prefix", sys.prefix))
    guard("include_dir", _include_dir)
    guard("has_python_h", lambda: os.path.isfile(os.path.join(out.get("include_dir") or "", "Python.h")))
    guard("libdir", lambda: sysconfig.get_config_var("LIBDIR"))
    guard("site_packages", _site)
    guard("sys_path", lambda: [p for p in sys.path if p])
    guard("glibc", _glibc)
    guard("packages", _dists)
    guard("torch_requires", lambda: _requires("torch"))
    guard("dist_paths", lambda: {k: os.path.abspath(v) for k, v in _DIST_AT.items()})
    out["modules"] = {}
    for name in PACKAGES:
        try:
            out["modules"][name] = _spec(name)
        except Exception as exc:
            out.setdefault("errors", {})["find_spec " + name] = f"{type(exc).__name__}: {exc}"
    return out


if __name__ == "__main__":
    _unshadow()
    sys.stdout.write("\n" + MARKER + json.dumps(describe()) + "\n")
    sys.stdout.flush()
