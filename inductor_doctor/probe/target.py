"""What the target interpreter says about itself, from one short stdlib-only subprocess.

The target may be another venv, another Python version, or not Python at all. We never import its
packages: the script reads `sys`, `sysconfig`, `importlib.metadata` and `importlib.util.find_spec`
of top-level names (which locates a package without executing it), and prints one JSON line after
a marker, so that a noisy `sitecustomize` cannot corrupt the answer. It must run on Python 3.8.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Optional

from inductor_doctor.probe._proc import run

MARKER = "@@INDUCTOR_DOCTOR_TARGET@@"

#: Top-level packages whose location we want (found, never imported).
PACKAGES = ("torch", "triton", "torch_xla", "nvidia")

# Python 3.8 syntax and stdlib only: this runs inside the interpreter being diagnosed.
SCRIPT = r'''
import json, os, platform, sys, sysconfig
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]  # a `torch/` directory where the doctor happens to run must not shadow the real one
out = {}
def guard(key, fn):
    try:
        out[key] = fn()
    except Exception as exc:
        out.setdefault("errors", {})[key] = "%s: %s" % (type(exc).__name__, exc)
guard("executable", lambda: sys.executable)
guard("version", lambda: "%d.%d.%d" % sys.version_info[:3])
guard("version_full", lambda: sys.version)
guard("implementation", lambda: sys.implementation.name)
guard("abiflags", lambda: getattr(sys, "abiflags", ""))
guard("gil_disabled", lambda: bool(sysconfig.get_config_var("Py_GIL_DISABLED")))
guard("platform", lambda: sys.platform)
guard("machine", lambda: platform.machine())
guard("prefix", lambda: sys.prefix)
guard("base_prefix", lambda: getattr(sys, "base_prefix", sys.prefix))
guard("include_dir", lambda: sysconfig.get_paths().get("include") or sysconfig.get_config_var("INCLUDEPY"))
guard("has_python_h", lambda: os.path.isfile(os.path.join(out.get("include_dir") or "", "Python.h")))
guard("libdir", lambda: sysconfig.get_config_var("LIBDIR"))
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
guard("site_packages", _site)
def _glibc():
    try:
        v = os.confstr("CS_GNU_LIBC_VERSION")
        if v:
            return v.split()[-1]
    except (AttributeError, ValueError, OSError):
        pass
    lib, ver = platform.libc_ver()
    return ver if lib == "glibc" and ver else None
guard("glibc", _glibc)
def _dists():
    # The wheel spec names the directory `{name}-{version}.dist-info` (name with `_` for `-`), so a
    # directory listing gives name and version without parsing ~100 METADATA files. The first hit
    # along sys.path wins, as for importlib.metadata.version(); anything else (egg-info, odd names)
    # is read the slow way.
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
            stem = n.rsplit(".", 1)[0]
            parts = stem.split("-")
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
    return found
guard("packages", _dists)
def _requires(dist):
    from importlib import metadata
    try:
        return metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return None
guard("torch_requires", lambda: _requires("torch"))
def _spec(name):
    import importlib.util
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    locs = list(spec.submodule_search_locations or [])
    if locs:
        return locs[0]
    return os.path.dirname(spec.origin) if spec.origin else None
out["modules"] = {}
for _name in PACKAGES:
    try:
        out["modules"][_name] = _spec(_name)
    except Exception as exc:
        out.setdefault("errors", {})["find_spec " + _name] = "%s: %s" % (type(exc).__name__, exc)
sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")
sys.stdout.flush()
'''


def _script() -> str:
    return f"PACKAGES = {PACKAGES!r}\nMARKER = {MARKER!r}\n" + SCRIPT


def query(python: str, timeout_s: float = 20.0) -> Dict[str, Any]:
    """The target's self-description, or `{"error": "..."}` when it is not a working Python.

    Runs from a temporary directory, so that the doctor's working directory cannot shadow packages.
    """
    with tempfile.TemporaryDirectory(prefix="indoc-target-") as tmp:
        res = run([python, "-"], timeout_s=timeout_s, cwd=tmp, env=dict(os.environ), input=_script())
    if res.error:
        return {"error": res.error}
    if res.timed_out:
        return {"error": f"{python} did not answer within {timeout_s:g}s"}
    data = _parse(res.stdout)
    if data is None:
        why = f"exit code {res.returncode}" if res.returncode else "no answer"
        detail = (res.stderr.strip().splitlines() or [""])[-1][:160]
        detail = f": {detail}" if detail else ""
        return {"error": f"{python} is not a usable Python interpreter ({why}{detail})"}
    return data


def _parse(stdout: str) -> Optional[Dict[str, Any]]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                value = json.loads(line[len(MARKER) :])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None
