"""The console script's entry point: the doctor's own failure is exit 3, even before it can start.

A missing or broken dependency of the doctor (click, rich, ...) would otherwise end the console
script with a traceback and exit 1, which a Dockerfile gate reads as "your environment has an
issue". So this module needs nothing but the standard library: it imports the command line, and if
that fails for any reason, says so in one line with the way to repair it, and exits 3.
"""

from __future__ import annotations

import sys
from typing import List, Optional

DOCTOR_FAILED = 3
INTERRUPTED = 130


def main(argv: Optional[List[str]] = None) -> int:
    try:
        from inductor_doctor.cli import main as cli_main
    except KeyboardInterrupt:
        return INTERRUPTED
    except BaseException as exc:  # noqa: BLE001 - whatever broke, it is the doctor's own failure
        sys.stderr.write(f"inductor-doctor: cannot start ({_what(exc)}); {REPAIR}\n")
        return DOCTOR_FAILED
    return cli_main(argv)


#: What to do about a broken installation of the doctor: the same words wherever it is found.
REPAIR = ("the doctor's own installation is broken — reinstall it with "
          f"`{sys.executable} -m pip install --force-reinstall inductor-doctor`")


def _what(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]


def broken_install(exc: BaseException) -> bool:
    """An import that failed after start-up (rich is imported only when output is rendered): a
    dependency missing or broken, or a module of the doctor's own gone, never a finding."""
    if isinstance(exc, ModuleNotFoundError):
        return True
    if isinstance(exc, ImportError):
        name = (getattr(exc, "name", None) or "").split(".")[0]
        return name != "inductor_doctor"
    return False


def repair_line(exc: BaseException) -> str:
    """The one line for a broken installation found while running."""
    return f"a dependency of the doctor cannot be imported ({_what(exc)}); {REPAIR}"


if __name__ == "__main__":
    raise SystemExit(main())
