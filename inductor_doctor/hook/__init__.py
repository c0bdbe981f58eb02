"""`inductor_doctor.hook.install()`: a compile-stack exception carries the doctor's triage as a note.

For programs that catch nothing: when an uncaught exception comes from the compile stack (its type
is defined in, or its traceback runs through, torch._dynamo, torch._inductor, torch._functorch,
triton or torch_xla), the hook triages the formatted traceback against the known issues and attaches
the answer as a PEP 678 note (`add_note`, Python >= 3.11), then calls the hook that was there
before, which prints the traceback with the note at its end. On Python 3.9 and 3.10 the note is
printed to stderr after the traceback instead.

It costs nothing until an exception: installing it imports nothing but `sys` and `threading`, and
the triage (the knowledge base) is imported only when a compile-stack exception reaches it. It
never changes the exception's type, its traceback or the program's exit status, and any trouble
of its own is swallowed: the previous hook always runs. `INDUCTOR_DOCTOR_HOOK=0` turns it off.

For a whole environment, `inductor-doctor hook --install-pth --python VENV/bin/python` writes a
one-line `.pth` into that interpreter's site-packages (`--remove-pth` takes it out); `pip install
inductor-doctor` never does.
"""

from __future__ import annotations

import sys
import threading

TYPE_CHECKING = False  # `typing` would bring `re` and a dozen modules into every program that installs this
if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import Any, List, Optional

#: Where a compile-stack exception is defined, or passes through.
MODULES = ("torch._dynamo", "torch._inductor", "torch._functorch", "torch._export", "triton", "torch_xla",
           "torch.utils.cpp_extension")
PATHS = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/", "/torch/_export/", "/triton/",
         "/torch_xla/", "/torch/utils/cpp_extension.py")
PTH_NAME = "inductor_doctor_hook.pth"
#: The `.pth` line: a site-packages without inductor-doctor, or INDUCTOR_DOCTOR_HOOK=0, does nothing.
PTH_LINE = ('import os; exec("try:\\n import inductor_doctor.hook as _h\\n _h.install()\\n'
            'except Exception:\\n pass") if os.environ.get("INDUCTOR_DOCTOR_HOOK", "1") != "0" else None\n')
_MARK = "_inductor_doctor_hook"


def install() -> None:
    """Wrap `sys.excepthook` and `threading.excepthook` (once; a second call does nothing)."""
    if not getattr(sys.excepthook, _MARK, False):
        sys.excepthook = _wrap_sys(sys.excepthook)
    if not getattr(threading.excepthook, _MARK, False):
        threading.excepthook = _wrap_threading(threading.excepthook)


def uninstall() -> None:
    """Put the previous hooks back (tests, or a library that installed it for a while)."""
    while getattr(sys.excepthook, _MARK, False):
        sys.excepthook = sys.excepthook.previous  # type: ignore[attr-defined]
    while getattr(threading.excepthook, _MARK, False):
        threading.excepthook = threading.excepthook.previous  # type: ignore[attr-defined]


def _wrap_sys(previous: Any) -> Any:
    def excepthook(exc_type: Any, exc: Any, tb: Any) -> None:
        late = _annotate(exc, tb)
        previous(exc_type, exc, tb)
        _late(late)

    setattr(excepthook, _MARK, True)
    excepthook.previous = previous  # type: ignore[attr-defined]
    return excepthook


def _wrap_threading(previous: Any) -> Any:
    def excepthook(args: Any) -> None:
        late = None
        if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
            late = _annotate(args.exc_value, args.exc_traceback)
        previous(args)
        _late(late)

    setattr(excepthook, _MARK, True)
    excepthook.previous = previous  # type: ignore[attr-defined]
    return excepthook


def _late(note: Optional[str]) -> None:
    if note:
        try:
            sys.stderr.write(note + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed stderr: nothing to say it on
            pass


def _annotate(exc: Any, tb: Any) -> Optional[str]:
    """Attach the note; return it when it must be printed after the traceback instead (3.9/3.10,
    or an exception that refuses notes). Never raises."""
    try:
        import os

        if os.environ.get("INDUCTOR_DOCTOR_HOOK") == "0" or not from_compile_stack(exc, tb):
            return None
        note = note_for(exc, tb)
        if note is None:
            return None
        if hasattr(exc, "add_note"):
            try:
                exc.add_note(note)
                return None
            except Exception:  # noqa: BLE001
                pass
        return note
    except BaseException:  # noqa: BLE001 - the program's exception is what must be reported
        import os

        if os.environ.get("INDUCTOR_DOCTOR_DEBUG"):
            import traceback

            traceback.print_exc()
        return None


def from_compile_stack(exc: Any, tb: Any = None) -> bool:
    """Cheap: the exception's type module, and the file names of its traceback, along its chain."""
    seen: List[int] = []
    current, trace = exc, tb
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.append(id(current))
        module = getattr(type(current), "__module__", "") or ""
        if any(module == m or module.startswith(m + ".") for m in MODULES):
            return True
        frames = 0
        trace = trace if trace is not None else getattr(current, "__traceback__", None)
        while trace is not None and frames < 400:
            name = trace.tb_frame.f_code.co_filename.replace("\\", "/")
            if any(p in name for p in PATHS):
                return True
            trace, frames = trace.tb_next, frames + 1
        current = current.__cause__ or current.__context__
        trace = None
    return False


def note_for(exc: Any, tb: Any) -> Optional[str]:
    """The doctor's words on this exception: the known issue it matches and what to do, or the
    `why` command when none does."""
    import shlex
    import traceback

    from inductor_doctor.triage.diagnosis import summary, triage_output

    text = "".join(traceback.format_exception(type(exc), exc, tb))
    found = summary(triage_output(text.encode("utf-8", errors="replace"), "traceback"))
    if not found["matched"]:
        argv = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
        return ("inductor-doctor: no known issue matches this compile-stack error; to find which part "
                "(caches, compile workers, compiler, settings, backend layer) fails, run:\n"
                f"  inductor-doctor why -- {shlex.join(argv)}")
    lines = [f"inductor-doctor: {found['assessment']} ({found['confidence']} match): {found['title']}"]
    for w in found.get("workarounds") or []:
        lines.append(f"  workaround: {w['text']}" + (f": {w['command']}" if w.get("command") else ""))
        break
    lines.append(f"  confirm here: inductor-doctor check --only {found['id']}; more: {found['explain']}")
    return "\n".join(lines)


# --- opting a whole environment in ---------------------------------------------------------------


def site_packages(python: str) -> str:
    """The interpreter's purelib directory, as that interpreter says (a venv's own)."""
    import subprocess

    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        from inductor_doctor.core.codes import UsageError

        raise UsageError(f"{python}: cannot ask it for its site-packages ({proc.stderr.strip()[-200:]})")
    return proc.stdout.strip().splitlines()[-1]
