"""The console script's entry point: the doctor's own failure is exit 3, even before it can start.

A missing or broken dependency of the doctor (click, rich, ...) would otherwise end the console
script with a traceback and exit 1, which a Dockerfile gate reads as "your environment has an
issue". So this module needs nothing but the standard library: it imports the command line, and if
that fails for any reason, says so in one line with the way to repair it, and exits 3.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` costs milliseconds on every `run` of a wrapped command; mypy reads this
if TYPE_CHECKING:  # pragma: no cover - typing only
    from typing import List, Optional

DOCTOR_FAILED = 3
INTERRUPTED = 130


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"]:  # wraps the user's command: started without click (_run.py)
        try:
            from inductor_doctor._run import parse_fast
        except BaseException:  # noqa: BLE001 - the full command line below says what broke
            parse_fast = None  # type: ignore[assignment]
        request = parse_fast(args[1:]) if parse_fast is not None else None
        if request is not None:
            from inductor_doctor._run import execute
            from inductor_doctor.run.process import reraise

            completed, document, trouble = execute(request)
            if document is not None or trouble:
                from inductor_doctor.cli import finish_run

                finish_run(request, document, trouble)
            return reraise(completed)
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
