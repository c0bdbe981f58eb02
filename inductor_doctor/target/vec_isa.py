"""Machine facts Inductor learns on its first CPU compile, learned once and kept: which CPU vector
instruction sets the compiler can build, and the precompiled prefix header.

Inductor's first CPU compile asks, for every vector ISA the CPU has (AVX-512 VNNI, AVX-512, AVX2,
...), whether the compiler can build ATen's vector headers for it: one C++ compile each, 10 s on
two cores and 90 s on a 16-core host. It is a fact about this machine (the CPU, the compiler, the
torch headers), not about the bug a canary looks for, and every canary starts with empty caches, so
every canary paid it again. The harness installs this module's import hook: the first canary that
computes the list has it recorded; later canaries on the same CPU, with the same compiler and the
same torch files, get the recorded list back and skip the build test. The code under test is
still compiled fresh, with the ISA Inductor would choose.

The record is keyed by the torch files that decide (the module's path and mtime), the CPU's flags,
the compiler the doctor probed (`INDUCTOR_DOCTOR_CXX_ID`), and the variables that change the choice
(`CXX`, `ATEN_CPU_CAPABILITY`, `TORCHINDUCTOR_*`). Torch releases whose ISA code this does not
recognise simply learn as usual.

Inductor also precompiles its C++ prefix header once per compiler, flags and header content, into a
directory it means to be global ("these headers need to be global", `codecache._HEADER_DIR`, keyed by
the checksum of the preprocessed header); under a canary's fresh temporary directory it was rebuilt
every time. It goes under the kept directory instead, still keyed by torch itself. Run by the target
interpreter: Python 3.8 syntax, stdlib only.
"""

import hashlib
import importlib.abc
import json
import os
import sys

#: Where the function lives: torch >= 2.5, and before it.
MODULES = ("torch._inductor.cpu_vec_isa", "torch._inductor.codecache")
ENV_EXACT = ("CXX", "CC", "ATEN_CPU_CAPABILITY", "INDUCTOR_DOCTOR_CXX_ID")
#: Inductor variables that cannot change the choice: where its cache is, how many compile threads,
#: and (any TORCHINDUCTOR_WORKER_*) how the pool of compile workers starts and logs. A canary that
#: sets a per-run one (compile-workers-fail's log path in its scratch directory) would otherwise
#: learn the ISAs again on every run: 80 s of a check on a 16-core host.
ENV_IGNORED = ("TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS")


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features", "features")):
                    return " ".join(sorted(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return ""


def _key(module):
    path = getattr(module, "__file__", "") or ""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        mtime = 0
    env = sorted((k, v) for k, v in os.environ.items() if k in ENV_EXACT or k.startswith("TORCHINDUCTOR_")
                 and k not in ENV_IGNORED and not k.startswith("TORCHINDUCTOR_WORKER_"))
    blob = json.dumps([sys.version, path, mtime, _cpu_flags(), env])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _store(key):
    where = os.environ.get("INDUCTOR_DOCTOR_MACHINE_DIR")
    return os.path.join(where, f"vec-isa-{key}.json") if where else None


def _recorded(path):
    try:
        with open(path) as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _record(path, names):
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(names, f)
        os.replace(tmp, path)
    except OSError:
        pass


def patch(module):
    """Replay the recorded list, or record the computed one; leave a module it cannot read alone."""
    _global_headers(module)
    original = getattr(module, "valid_vec_isa_list", None)
    supported = getattr(module, "supported_vec_isa_list", None)
    if original is None or supported is None:
        return
    path = _store(_key(module))
    if path is None:
        return
    names = _recorded(path)
    by_name = {str(isa): isa for isa in supported}
    if names is not None and all(n in by_name for n in names):
        isas = [by_name[n] for n in names]
        _trust(isas)

        def valid_vec_isa_list():
            return list(isas)
    else:

        def valid_vec_isa_list():
            found = original()
            _record(path, [str(isa) for isa in found])
            return found
    for attr in ("cache_clear", "cache_info"):
        if hasattr(original, attr):
            setattr(valid_vec_isa_list, attr, getattr(original, attr))
    module.valid_vec_isa_list = valid_vec_isa_list


def _global_headers(module):
    """Inductor's precompiled headers in the kept directory, where torch meant them: global."""
    where = os.environ.get("INDUCTOR_DOCTOR_MACHINE_DIR")
    if not where or not isinstance(getattr(module, "_HEADER_DIR", None), str):
        return
    headers = os.path.join(where, "precompiled-headers")
    module._HEADER_DIR = headers
    if isinstance(getattr(module, "_HEADER_LOCK_DIR", None), str):
        module._HEADER_LOCK_DIR = os.path.join(headers, "locks")


def _trust(isas):
    """The replayed ISAs were built here before: `bool(isa)` must not build them again."""
    try:
        from torch._inductor import config

        if getattr(config.cpp, "vec_isa_ok", None) is None:
            config.cpp.vec_isa_ok = True
    except Exception:  # noqa: BLE001 - a torch without the knob builds as usual
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Patches the module right after it is first imported, before anyone takes its functions."""

    def find_spec(self, name, path=None, target=None):
        if name not in MODULES:
            return None
        sys.meta_path.remove(self)
        try:
            import importlib.util

            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            try:
                patch(module)
            except Exception:  # noqa: BLE001 - never the canary's failure
                pass

        loader.exec_module = exec_and_patch
        return spec


def install():
    if os.environ.get("INDUCTOR_DOCTOR_MACHINE_DIR"):
        sys.meta_path.insert(0, _Finder())
