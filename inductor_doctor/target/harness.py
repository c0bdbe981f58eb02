"""Runs one canary script and reports how it ended as one JSON line on stdout.

Standard library only, Python 3.8+: it runs under whatever interpreter is being diagnosed, where
inductor-doctor itself is usually not installed. Usage: harness.py SCRIPT DEVICE [NEEDS,...]

A script that is not applicable here raises SystemExit("SKIP: <reason>"); one that could exercise
only part of its failure path (imports, but no GPU to compile on) and found that part clean raises
SystemExit("PARTIAL: <what it could run>"), so that a clean part never passes for a clean whole; one
that ran clean for a reason the user should read (a workaround already in effect) raises
SystemExit("OK: <why>").

An `ok` needs proof that the path under test ran, and the harness gathers it after every script,
so that a new canary has it without a line of its own (`_exercised`): the graphs Dynamo captured
(its `counters`), the C++ kernels Inductor compiled that this process loaded (shared objects of the
canary's fresh Inductor cache mapped in /proc/self/maps) and the GPU kernels compiled into the fresh
Inductor and Triton caches (cubin, hsaco, spv). A script that exercises something the harness cannot
see (a child interpreter, a library it builds and loads itself) declares it with
`indoc_harness.exercised("what ran")`, a module the harness provides.

Settings that would make the test hollow (torch.compile a no-op, a fall back to eager on error,
another backend) are set aside before the script runs (`_set_aside`): the variables named in
$INDUCTOR_DOCTOR_BYPASS are removed from this process's environment (a sitecustomize may have set
them), and torch config attributes already set at start-up are put back to their defaults. The
result names what was set aside, and what was still in effect when the script ended.
While the script runs, where it is (its innermost frame, and its own line that led there) is written
to $INDUCTOR_DOCTOR_STAGE_FILE twice a second: a canary stopped at its timeout can say what it was
doing.
"""

import importlib.util
import json
import os
import runpy
import sys
import threading
import time
import traceback

MARKER = "@@INDUCTOR_DOCTOR_RESULT@@"


def _report(result):
    mods = sys.modules
    for name in ("torch", "triton", "torch_xla"):
        mod = mods.get(name)
        if mod is not None:
            result.setdefault("versions", {})[name] = str(getattr(mod, "__version__", "?"))
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.write("\n" + MARKER + " " + json.dumps(result) + "\n")
    sys.stdout.flush()


def _where(frame, script):
    """`torch/_inductor/cpu_vec_isa.py:123 in pick_vec_isa (from block_mask_cpu.py:18)`."""
    def short(path):
        for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
            if marker in path:
                return path.split(marker, 1)[1]
        return os.path.basename(path)

    inner = f"{short(frame.f_code.co_filename)}:{frame.f_lineno} in {frame.f_code.co_name}"
    own = frame
    while own is not None and os.path.abspath(own.f_code.co_filename) != script:
        own = own.f_back
    if own is not None and own is not frame:
        inner += f" (from {os.path.basename(script)}:{own.f_lineno})"
    return inner


def _watch(path, main_id, script):
    """Write where the main thread is, whenever that changes, until the process ends."""
    last = None
    while True:
        time.sleep(0.5)
        frame = sys._current_frames().get(main_id)
        if frame is None:
            continue
        try:
            where = _where(frame, script)
        except Exception:  # noqa: BLE001 - a best-effort hint, never the canary's failure
            continue
        if where != last:
            try:
                with open(path + ".tmp", "w") as f:
                    f.write(where)
                os.replace(path + ".tmp", path)
            except OSError:
                return
            last = where


def _keep_machine_facts():
    """The CPU's valid vector ISAs, learned once per machine (vec_isa.py); then this folder leaves
    sys.path, so that nothing in it shadows what the canary imports."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import vec_isa

        vec_isa.install()
        vec_isa.learn_early()
    except Exception:  # noqa: BLE001 - a hint lost is only time lost
        pass
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]


#: Compiled GPU kernels, as Triton and Inductor keep them (CUDA, ROCm, XPU).
GPU_BINARIES = (".cubin", ".hsaco", ".spv", ".zebin")


def _declared_api(declared):
    """`import indoc_harness; indoc_harness.exercised(what)` for a canary."""
    import types

    api = types.ModuleType("indoc_harness")
    api.__doc__ = "What a canary ran that the harness cannot see for itself."
    api.exercised = lambda what: declared.append(str(what)[:300])
    sys.modules[api.__name__] = api


def _bypass_table():
    try:
        table = json.loads(os.environ.get("INDUCTOR_DOCTOR_BYPASS") or "{}")
    except ValueError:
        table = {}
    return table if isinstance(table, dict) else {}


def _config_module(dotted):
    """(module, attribute) of "torch._dynamo.config.disable", if that module is already imported."""
    module, _, attr = dotted.rpartition(".")
    return sys.modules.get(module), attr


def _set_aside(table):
    """Remove what would make the test hollow; returns what was removed, as the user would read it."""
    removed = []
    for name in table.get("env") or []:
        if name in os.environ:
            removed.append(f"{name}={os.environ.pop(name)}")
    for dotted, off in sorted((table.get("config") or {}).items()):
        mod, attr = _config_module(dotted)
        if mod is None or not hasattr(mod, attr):
            continue
        try:
            value = getattr(mod, attr)
            if value != off:
                setattr(mod, attr, off)
                removed.append(f"{dotted}={value!r} (set at start-up)")
        except Exception:  # noqa: BLE001 - a config that refuses is left; the proof will tell
            continue
    return removed


def _in_effect(table):
    """The hollow settings in effect as the script ended (set again after the harness set them aside)."""
    found = []
    for dotted, off in sorted((table.get("config") or {}).items()):
        mod, attr = _config_module(dotted)
        try:
            if mod is not None and hasattr(mod, attr) and getattr(mod, attr) != off:
                found.append(f"{dotted}={getattr(mod, attr)!r}")
        except Exception:  # noqa: BLE001
            continue
    torch = sys.modules.get("torch")
    compile_fn = getattr(torch, "compile", None) if torch is not None else None
    code = getattr(compile_fn, "__code__", None)
    home = os.path.dirname(getattr(torch, "__file__", "") or "")
    if code is not None and home and not os.path.abspath(code.co_filename).startswith(home + os.sep):
        found.append(f"torch.compile replaced by {getattr(compile_fn, '__module__', '?')}."
                     f"{getattr(compile_fn, '__qualname__', '?')} ({code.co_filename})")
    return found


def _mapped_under(root):
    """Distinct shared objects under `root` this process has mapped (loaded), from /proc/self/maps."""
    seen = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                if path.startswith(root + os.sep) and ".so" in os.path.basename(path):
                    seen.add(path)
    except OSError:
        return None
    return len(seen)


def _files_with(roots, suffixes):
    count = 0
    for root in roots:
        for _, _, files in os.walk(root):
            count += sum(1 for f in files if f.endswith(suffixes))
    return count


def _exercised(declared):
    """What the script made the compile stack do, read from what ran, never from what it said."""
    proof = {}
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None)
    if counters is not None:
        try:
            proof["graphs"] = int(counters["stats"]["unique_graphs"])
        except Exception:  # noqa: BLE001 - another torch's counters
            pass
    inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    triton = os.environ.get("TRITON_CACHE_DIR")
    if inductor and os.path.isdir(inductor):
        loaded = _mapped_under(os.path.realpath(inductor))
        if loaded is not None:
            proof["cpu_kernels"] = loaded
    roots = [d for d in (inductor, triton) if d and os.path.isdir(d)]
    if roots:
        proof["gpu_kernels"] = _files_with(roots, GPU_BINARIES)
    if declared:
        proof["declared"] = list(declared)
    return proof


def main():
    script, device = sys.argv[1], sys.argv[2]
    needs = [n for n in (sys.argv[3] if len(sys.argv) > 3 else "").split(",") if n]
    for name in needs:
        try:
            found = importlib.util.find_spec(name) is not None
        except Exception:
            found = False
        if not found:
            _report({"status": "missing", "module": name, "message": name + " is not installed"})
            return
    start = time.monotonic()
    stage = os.environ.get("INDUCTOR_DOCTOR_STAGE_FILE")
    if stage:
        where = (stage, threading.get_ident(), os.path.abspath(script))
        watcher = threading.Thread(target=_watch, args=where, name="indoc-stage", daemon=True)
        watcher.start()
    _keep_machine_facts()
    table = _bypass_table()
    set_aside = _set_aside(table)
    declared = []
    _declared_api(declared)
    sys.argv = [script, device]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    result = {"status": "ok"}
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str) and code.startswith("SKIP:"):
            result = {"status": "skip", "message": code[5:].strip()}
        elif isinstance(code, str) and code.startswith("PARTIAL:"):
            result = {"status": "ok", "exercised": "partial", "message": code[8:].strip()}
        elif isinstance(code, str) and code.startswith("OK:"):  # clean, and what made it so
            result = {"status": "ok", "message": code[3:].strip()}
        elif code not in (None, 0):
            result = {"status": "error", "exc_type": "SystemExit", "message": str(code)}
    except BaseException as exc:  # noqa: BLE001 - every failure is data here
        tb = traceback.format_exc()
        result = {
            "status": "error",
            "exc_type": type(exc).__module__ + "." + type(exc).__qualname__,
            "message": str(exc)[-8000:],
            "traceback": tb[-12000:],
        }
    result["duration_s"] = round(time.monotonic() - start, 3)
    try:
        result["proof"] = _exercised(declared)
        if set_aside:
            result["set_aside"] = set_aside
        still = _in_effect(table)
        if still:
            result["in_effect"] = still
    except Exception as exc:  # noqa: BLE001 - no proof is an answer too (never `ok`)
        result["proof_error"] = f"{type(exc).__name__}: {exc}"
    _report(result)


if __name__ == "__main__":
    main()
