"""Runs one canary script and reports how it ended as one JSON line on stdout.

Standard library only, Python 3.8+: it runs under whatever interpreter is being diagnosed, where
inductor-doctor itself is usually not installed. Usage: harness.py SCRIPT DEVICE [NEEDS,...]

A script that is not applicable here raises SystemExit("SKIP: <reason>"); one that could exercise
only part of its failure path (imports, but no GPU to compile on) and found that part clean raises
SystemExit("PARTIAL: <what it could run>"), so that a clean part never passes for a clean whole; one
that ran clean for a reason the user should read (a workaround already in effect) raises
SystemExit("OK: <why>").
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
    _report(result)


if __name__ == "__main__":
    main()
