"""What only a live torch knows: run by the target interpreter, never imported by the doctor.

It prints a first JSON line *before* `import torch` and a second one at the end, so that a torch
whose import kills the process (a segfault in a CUDA library, an abort) is recognised by the missing
second line. The shared libraries are read from `/proc/self/maps` after cuDNN was asked for its
version: what the process loaded, which is not necessarily what `ldconfig` or `pip list` suggest
(pytorch/pytorch#78489). Python 3.8 syntax.
"""

import json
import os
import sys
import traceback

MARKER = "@@INDUCTOR_DOCTOR_LIVE@@"
#: The libraries whose loaded copy matters (basename substrings).
KEEP = ("libstdc++", "libgcc_s", "libgomp", "libiomp", "libomp", "libcudnn", "libcudart", "libcublas",
        "libnccl", "libcuda.so", "libnvrtc", "libtorch", "libc10", "libtriton", "libpython", "libtpu",
        "_XLAC",
        # the rest of the nvidia-* wheels' libraries (cuda-libs-shadowed)
        "libnvJitLink", "libcusparse", "libcufft", "libcurand", "libcusolver", "libcupti", "libnvToolsExt",
        "libnvshmem", "libcufile")


def emit(d):
    sys.stdout.write("\n" + MARKER + json.dumps(d) + "\n")
    sys.stdout.flush()


def err(exc):
    lines = str(exc).strip().splitlines()
    return "{}: {}".format(type(exc).__name__, lines[0] if lines else "")


def maps():
    """The shared objects this process has mapped, in load order."""
    seen = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].strip().startswith("/") and ".so" in parts[5]:
                p = parts[5].strip()
                if p not in seen:
                    seen.append(p)
    return seen


def devices(torch, out):
    devs = []
    if not out.get("cuda_available"):
        return devs
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        devs.append({"index": i, "name": p.name, "sm": f"{p.major}.{p.minor}",
                     "memory_mib": int(p.total_memory // (1024 * 1024)),
                     "sm_count": int(p.multi_processor_count)})
    return devs


def cudart_version():
    import ctypes

    for path in maps():
        if "libcudart" in os.path.basename(path):
            v = ctypes.c_int(0)
            if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(v)) == 0:
                return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    return None


def cuda_available(torch, out):
    """`torch.cuda.is_available()`, keeping the "CUDA initialization: ..." warning it may give once."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok = bool(torch.cuda.is_available())
    said = [str(w.message) for w in caught if "CUDA" in str(w.message)]
    if said:
        out["cuda_init_warning"] = said[0][:2000]
    return ok


def arch_list(torch):
    """torch.cuda.get_arch_list() without initialising CUDA (torch-gpu-arch-missing)."""
    flags = getattr(torch._C, "_cuda_getArchFlags", lambda: None)() if torch.version.cuda else None
    return flags.split() if flags else None


def gpu_extra(torch, out):
    """Each GPU's opt-in shared memory per block (triton-shared-memory)."""
    extra = []
    for d in out.get("devices") or []:
        p = torch.cuda.get_device_properties(d["index"])
        extra.append({"index": d["index"], "smem_optin": getattr(p, "shared_memory_per_block_optin", None)})
    return extra


def triton_info():
    try:
        import triton
    except BaseException as exc:
        return {"import_ok": False, "import_error": err(exc)}
    return {"import_ok": True, "version": getattr(triton, "__version__", None),
            "path": os.path.dirname(triton.__file__)}


def big_gpu(out):
    if not out.get("devices"):
        return None
    from torch._inductor.utils import is_big_gpu

    return [bool(is_big_gpu(d["index"])) for d in out["devices"]]


def compile_settings(torch):
    """What makes torch.compile hollow in this interpreter after its start-up ran (a sitecustomize
    may set it): the variables of $INDUCTOR_DOCTOR_BYPASS as this process sees them, the values of
    its config attributes in modules already imported (importing Dynamo here would cost seconds; a
    start-up file that sets one has imported it), and whether torch.compile is torch's own."""
    try:
        table = json.loads(os.environ.get("INDUCTOR_DOCTOR_BYPASS") or "{}")
    except ValueError:
        table = {}
    out = {"env": {n: os.environ[n] for n in table.get("env") or [] if n in os.environ}, "config": {}}
    for dotted, off in sorted((table.get("config") or {}).items()):
        module, _, attr = dotted.rpartition(".")
        mod = sys.modules.get(module)
        if mod is not None and hasattr(mod, attr) and getattr(mod, attr) != off:
            value = getattr(mod, attr)
            out["config"][dotted] = value if isinstance(value, (bool, int, float, str)) else repr(value)
    fn = getattr(torch, "compile", None)
    code = getattr(fn, "__code__", None)
    home = os.path.dirname(torch.__file__)
    if code is not None and not os.path.abspath(code.co_filename).startswith(home + os.sep):
        out["compile_replaced"] = "{}.{} ({})".format(getattr(fn, "__module__", "?"),
                                                      getattr(fn, "__qualname__", "?"), code.co_filename)
    return out


def config_changed(mod):
    """The entries of a config module (already imported: importing one costs seconds) that are not
    their defaults and that its cache key holds (its own ignore lists applied)."""
    prefixes = tuple(getattr(mod, "_cache_config_ignore_prefix", None) or ())
    ignore = set(getattr(mod, "_save_config_ignore", None) or ())
    entries = getattr(mod, "_config", None) or {}
    out = {}
    for name in sorted(entries):
        if name in ignore or (prefixes and name.startswith(prefixes)):
            continue
        try:
            is_default = getattr(mod, "_is_default", None)
            if is_default is not None:
                changed = not is_default(name)
            else:
                changed = getattr(mod, name) != getattr(entries[name], "default", getattr(mod, name))
            if changed:
                value = getattr(mod, name)
                text = repr(value)
                out[name] = text if len(text) <= 200 else text[:197] + "..."
        except Exception:
            continue
    return out


def cache_key(torch):
    """What only a live process knows of the compile-cache keys (probe/cache_key.py): the variables
    the installed Triton's own function puts in its key, torch's CPU thread count, and config entries
    a start-up file changed."""
    out = {"threads": int(torch.get_num_threads())}
    if "triton" in sys.modules:
        try:
            from triton._C.libtriton import get_cache_invalidating_env_vars

            out["triton_env"] = {str(k): str(v) for k, v in get_cache_invalidating_env_vars().items()}
        except BaseException as exc:
            out["triton_env_error"] = err(exc)
    config = {}
    for short, name in (("inductor", "torch._inductor.config"), ("functorch", "torch._functorch.config")):
        mod = sys.modules.get(name)
        if mod is not None:
            changed = config_changed(mod)
            if changed:
                config[short] = changed
    out["config"] = config
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") in (here, os.getcwd()):
        del sys.path[0]
    out = {"stage": "import torch"}
    emit(out)
    try:
        import torch
    except BaseException as exc:
        out.update(import_ok=False, import_error=err(exc), traceback=traceback.format_exc()[-3000:],
                   stage="done")
        emit(out)
        return
    out["import_ok"] = True
    try:  # what one process that imports torch holds: the floor of every compile worker's memory
        import resource

        out["import_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    except Exception:  # noqa: BLE001 - not on every platform
        pass

    def guard(key, fn):
        out["stage"] = key
        try:
            out[key] = fn()
        except Exception as exc:
            out.setdefault("errors", {})[key] = err(exc)

    guard("torch_version", lambda: torch.__version__)
    guard("torch_file", lambda: os.path.dirname(torch.__file__))
    guard("cxx11_abi", lambda: bool(torch._C._GLIBCXX_USE_CXX11_ABI))
    guard("cuda_version", lambda: torch.version.cuda)
    guard("hip_version", lambda: getattr(torch.version, "hip", None))
    guard("cuda_available", lambda: cuda_available(torch, out))
    guard("devices", lambda: devices(torch, out))
    guard("cudnn_version", lambda: torch.backends.cudnn.version() if out.get("cuda_available") else None)
    guard("triton", triton_info)
    guard("big_gpu", lambda: big_gpu(out))
    guard("cudart_version", cudart_version)
    guard("loaded", lambda: [p for p in maps() if any(k in os.path.basename(p) for k in KEEP)])
    guard("arch_list", lambda: arch_list(torch))
    guard("device_count", lambda: int(torch.cuda.device_count()) if torch.version.cuda else None)
    guard("gpu_extra", lambda: gpu_extra(torch, out))
    guard("compile_settings", lambda: compile_settings(torch))
    guard("cache_key", lambda: cache_key(torch))
    out["stage"] = "done"
    emit(out)


if __name__ == "__main__":
    main()
