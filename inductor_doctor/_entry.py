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
        what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
        sys.stderr.write(
            f"inductor-doctor: cannot start ({what}); the doctor's own installation is broken — "
            f"reinstall it with `{sys.executable} -m pip install --force-reinstall inductor-doctor`\n"
        )
        return DOCTOR_FAILED
    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
