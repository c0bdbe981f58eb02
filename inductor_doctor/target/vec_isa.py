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
    return _key_of(getattr(module, "__file__", "") or "")


def _key_of(path):
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
    """The recorded list, only from a file of this user's that no one else can write."""
    try:
        with open(path) as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _record(path, names):
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            json.dump(names, f)  # 0600 whatever the umask: _recorded reads no file others can write
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
    by_name = {str(isa): isa for isa in supported}

    def replayed():
        names = _recorded(path)
        if names is None or not all(n in by_name for n in names):
            return None
        isas = [by_name[n] for n in names]
        _trust(isas)
        return isas

    isas = replayed()
    if isas is not None:

        def valid_vec_isa_list():
            return list(isas)
    else:
        learned = []

        def valid_vec_isa_list():
            """One process learns at a time (an early learner may be at it already: wait for it,
            then replay what it recorded)."""
            if not learned:
                with _learning(path):
                    found = replayed()
                    if found is None:
                        found = original()
                        _record(path, [str(isa) for isa in found])
                    learned.append(found)
            return list(learned[0])
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


#: How long a process waits for another that is learning the ISAs before it learns them itself.
LEARN_WAIT_S = 300.0


class _learning:
    """An exclusive lock on the record while one process learns it (fcntl; none where there is
    none). A learner that dies lets go with its process."""

    def __init__(self, path):
        self.path, self.fd = path + ".lock", None

    def __enter__(self):
        try:
            import fcntl
            import time

            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            deadline = time.monotonic() + LEARN_WAIT_S
            while True:
                try:
                    fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return self
                except (BlockingIOError, PermissionError):
                    if time.monotonic() > deadline:
                        return self  # learn it ourselves
                    time.sleep(0.05)
        except (ImportError, OSError):
            return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # lets the lock go
        return False


def _recorded_already():
    """Whether the record exists, found without importing torch (None: cannot tell)."""
    import importlib.util

    if not os.environ.get("INDUCTOR_DOCTOR_MACHINE_DIR"):
        return None
    try:
        spec = importlib.util.find_spec("torch")  # a top-level package: found, not imported
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    for name in MODULES:
        source = os.path.join(os.path.dirname(spec.origin), *name.split(".")[1:]) + ".py"
        if os.path.exists(source):
            return _recorded(_store(_key_of(source))) is not None
    return None


def learn_early():
    """Learn the ISAs in a process of their own, started beside the canary, when it will need them
    and they are not on record: Inductor asks for them only after Dynamo has traced (6 s into the
    block-mask canary), then spends seconds compiling ATen's vector headers once per ISA, on the
    canary's longest path. Started at once, the learner is done or nearly so by then; the canary
    waits for its record instead of learning too. It runs in the canary's process group, so a
    canary stopped at its timeout takes it along."""
    if os.environ.get("INDUCTOR_DOCTOR_EARLY_ISA") != "1" or _recorded_already() is not False:
        return None
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import vec_isa; vec_isa.install(); "
            "import torch._inductor.cpu_vec_isa as m; m.valid_vec_isa_list()")
    env = dict(os.environ, INDUCTOR_DOCTOR_EARLY_ISA="0", INDUCTOR_DOCTOR_STAGE_FILE="")
    try:
        return subprocess.Popen([sys.executable, "-c", code, here], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
