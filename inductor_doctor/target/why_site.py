"""`why`'s backend step-down, as the `sitecustomize` of the re-run program (copied there by `why`).

The doctor cannot edit the user's script to pass `backend="eager"`, and torch reads no environment
variable that picks torch.compile's backend. So `why` copies this file, as `sitecustomize.py`, into
its own temporary directory and puts that first on PYTHONPATH of the one re-run: Python imports it
at start-up, it waits for `import torch` (an import hook; torch is not imported here), then wraps
`torch.compile` so every call uses the backend in INDUCTOR_DOCTOR_WHY_BACKEND (`mode` and
`options`, Inductor's own, are dropped for the others). Each call is also counted in the file
INDUCTOR_DOCTOR_WHY_MARK, so `why` knows whether the program compiled anything at all. With
INDUCTOR_DOCTOR_WHY_BISECT_LOG (the run that proves the compiler bisector's `TORCH_BISECT_*` line),
each application of the bisected subsystem is written there, numbered as the bisector counts them,
with what it applies to (the op of a lowering's node, a pass's name). The sitecustomize the
interpreter would have imported otherwise is imported after it, unchanged.

Python 3.8 syntax, standard library only: it runs inside the user's interpreter.
"""

import functools
import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _count(backend):
    mark = os.environ.get("INDUCTOR_DOCTOR_WHY_MARK")
    if mark:
        try:
            with open(mark, "a") as fh:
                fh.write((backend or "unchanged") + "\n")
        except OSError:
            pass


def _wrap(torch):
    original = torch.compile
    backend = os.environ.get("INDUCTOR_DOCTOR_WHY_BACKEND") or None

    @functools.wraps(original)
    def compile(*args, **kwargs):
        _count(backend)
        if backend:
            kwargs["backend"] = backend
            if backend != "inductor":
                kwargs.pop("mode", None)
                kwargs.pop("options", None)
        return original(*args, **kwargs)

    torch.compile = compile
    _record_bisect()


def _describe(debug_info):
    """What one application is: the bisector's own words, and the op where it is a graph node."""
    said = str(debug_info())
    for cell in getattr(debug_info, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if hasattr(value, "target") and hasattr(value, "op") and hasattr(value, "graph"):
            return said, str(value.target)
    return said, ""


def _record_bisect():
    log = os.environ.get("INDUCTOR_DOCTOR_WHY_BISECT_LOG")
    if not log:
        return
    try:
        from torch._inductor import compiler_bisector as cb
    except Exception:  # noqa: BLE001 - a torch without the bisector: nothing to record
        return
    original = cb.CompilerBisector.disable_subsystem.__func__
    counter = cb.subsystem_call_counter

    def disable_subsystem(cls, backend, subsystem, debug_info=None):
        if debug_info is not None and cls.bisection_enabled and cls.get_backend() == backend \
                and cls.get_subsystem() == subsystem:
            try:
                said, target = _describe(debug_info)
                with open(log, "a") as fh:
                    fh.write(f"{counter[subsystem]}\t{said.replace(chr(9), ' ')}\t{target}\n")
            except Exception:  # noqa: BLE001 - never break the program over the doctor's record
                pass
        return original(cls, backend, subsystem, debug_info)

    cb.CompilerBisector.disable_subsystem = classmethod(disable_subsystem)


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: lets the real finder find torch, and wraps its loader's exec_module."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once: the real finders answer from here on
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            try:
                _wrap(module)
            except Exception:  # noqa: BLE001 - never break the program over the doctor's wrapper
                pass

        spec.loader.exec_module = exec_module
        return spec


def _chain():
    """Import the sitecustomize this one hides (a distribution's, a user's), as Python would have."""
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
        mod = sys.modules.pop("sitecustomize", None)
        try:
            import sitecustomize  # noqa: F401
        except ImportError:
            pass
        finally:
            if "sitecustomize" not in sys.modules and mod is not None:
                sys.modules["sitecustomize"] = mod
    finally:
        sys.path[:] = saved


if "torch" in sys.modules:  # pragma: no cover - only when something imported torch this early
    _wrap(sys.modules["torch"])
else:
    sys.meta_path.insert(0, _AfterTorch())
_chain()
