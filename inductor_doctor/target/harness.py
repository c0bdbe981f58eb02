"""Runs one canary script and reports how it ended as one JSON line on stdout.

Standard library only, Python 3.8+: it runs under whatever interpreter is being diagnosed, where
inductor-doctor itself is usually not installed. Usage: harness.py SCRIPT DEVICE [NEEDS,...]
A script that is not applicable here raises SystemExit("SKIP: <reason>").
"""

import importlib.util
import json
import os
import runpy
import sys
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
    sys.argv = [script, device]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    result = {"status": "ok"}
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str) and code.startswith("SKIP:"):
            result = {"status": "skip", "message": code[5:].strip()}
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
