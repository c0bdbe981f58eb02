"""The result cache, keyed by a cheap fingerprint of the environment.

A repeated `check` on an unchanged machine should answer from here in well under a second, so the
fingerprint must cost far less than the probe: the interpreter, the names of the installed
distributions (their dist-info directories carry the versions), the compilers' paths and
timestamps, the driver's version file, the GPUs the driver lists, and the environment variables the
compile stack reads. Any change to one of them is a different key.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from inductor_doctor import __version__
from inductor_doctor.files import write_text_atomic
from inductor_doctor.paths import cache_dir, private_dir

ENV_PREFIXES = ("TORCH", "TRITON", "CUDA", "NVIDIA", "XLA", "PJRT", "INDUCTOR_DOCTOR_", "LD_")
ENV_NAMES = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "PATH", "CPATH", "CONDA_PREFIX", "VIRTUAL_ENV")
#: Variables that change nothing the checks see: where and how the report goes, the exit policy,
#: suppressions (applied after the cache), and torchrun's bookkeeping (a new run id per job would
#: otherwise make every `check --distributed` a cache miss).
ENV_IGNORED = ("INDUCTOR_DOCTOR_CACHE_DIR", "INDUCTOR_DOCTOR_FORMAT", "INDUCTOR_DOCTOR_OUTPUT",
               "INDUCTOR_DOCTOR_GATHER_TIMEOUT", "INDUCTOR_DOCTOR_REDACT", "INDUCTOR_DOCTOR_QUIET",
               "INDUCTOR_DOCTOR_FAIL_ON", "INDUCTOR_DOCTOR_FAIL_ON_WARNINGS", "INDUCTOR_DOCTOR_SUPPRESS",
               "INDUCTOR_DOCTOR_CONFIG")
ENV_IGNORED_PREFIXES = ("TORCHELASTIC_",)
COMPILERS = ("c++", "g++", "clang++", "cc", "gcc", "clang", "nvcc", "ptxas", "nvidia-smi")
SYS_PATH_TIMEOUT_S = 20


def _stat_key(path: str) -> Optional[List[Any]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_size, int(st.st_mtime)]


def target_sys_path(python: str) -> List[str]:
    """The target's import path, from one bare interpreter start (no torch anywhere)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return [p for p in sys.path if p]
    proc = subprocess.run(
        [python, "-c", "import sys, json; print(json.dumps(sys.path))"],
        capture_output=True,
        text=True,
        timeout=SYS_PATH_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    value = json.loads(proc.stdout.strip().splitlines()[-1])
    return [p for p in value if isinstance(p, str) and p]


def _distributions(paths: List[str]) -> List[str]:
    found: List[str] = []
    for entry in paths:
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        found.extend(
            f"{entry}/{n}" for n in names if n.endswith((".dist-info", ".egg-info", ".egg-link", ".pth"))
        )
    return sorted(found)


def _gpus() -> List[str]:
    root = Path("/proc/driver/nvidia/gpus")
    out: List[str] = []
    try:
        for d in sorted(root.iterdir()):
            try:
                out.append((d / "information").read_text(errors="replace"))
            except OSError:
                out.append(d.name)
    except OSError:
        pass
    return out


def fingerprint(python: str, options: Dict[str, Any]) -> Optional[str]:
    """A stable hash of everything a verdict depends on; None when it cannot be computed."""
    try:
        paths = target_sys_path(python)
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None
    try:
        driver = Path("/proc/driver/nvidia/version").read_text(errors="replace")
    except OSError:
        driver = None
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ENV_NAMES or k.startswith(ENV_PREFIXES)
        if k not in ENV_IGNORED and not k.startswith(ENV_IGNORED_PREFIXES)
    }
    tools = {}
    for name in COMPILERS + tuple(filter(None, (os.environ.get("CXX"), os.environ.get("CC")))):
        where = shutil.which(name.split()[0]) if name else None
        tools[name] = _stat_key(os.path.realpath(where)) if where else None
    from inductor_doctor.kb import KB_VERSION, registry

    inputs = {
        "tool": __version__,
        "kb": KB_VERSION,
        "issues": [(i.id, i.source) for i in registry()],
        "python": _stat_key(os.path.realpath(python)),
        "python_path": python,
        "distributions": _distributions(paths),
        "driver": driver,
        "gpus": _gpus(),
        "tools": tools,
        "env": sorted(env.items()),
        "options": options,
    }
    blob = json.dumps(inputs, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def _path(key: str) -> Optional[Path]:
    root = cache_dir()
    return root / "results" / f"{key}.json" if root is not None else None


def load(key: str) -> Optional[Dict[str, Any]]:
    """A cached report, or None: a missing, unreadable, truncated or foreign file is a miss."""
    path = _path(key)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("report"), dict):
        return None
    return data["report"]


def store(key: str, report: Dict[str, Any]) -> Optional[str]:
    """Save atomically with user-only permissions; returns why it could not, if it could not."""
    path = _path(key)
    if path is None:
        return "result cache not written (no home directory: set HOME or INDUCTOR_DOCTOR_CACHE_DIR)"
    try:
        private_dir(path.parent)
        write_text_atomic(path, json.dumps({"key": key, "report": report}), private=True)
    except OSError as exc:
        return f"result cache not written ({exc.strerror or exc}: {path.parent})"
    return None


def last_findings(python: Optional[str] = None) -> List[Dict[str, Any]]:
    """The findings of the last check of this interpreter still on record (none yet)."""
    return []
