"""Fleet mode: `merge` of many `check` reports, and `check --distributed` under torchrun.

Both end in the same `merge/v1` document (fleet_merge.py) and the same renderers
(fleet_render.py). `merge` only reads files: it never runs, imports or evaluates anything found in
a report. `--distributed` (fleet_dist.py) runs the normal check on every rank and gathers the
reports over torch.distributed's store in a helper subprocess, so this process stays torch-free.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.files import emit
from inductor_doctor.model import ExitCode, FailOn, UsageError, exit_code_for

#: A report bigger than this is not a `check` report (they are tens of kilobytes).
MAX_REPORT_BYTES = 64 * 1024 * 1024


def load_report(path: Path) -> Dict[str, Any]:
    """A validated `check` report; anything else is a UsageError naming the file in one line."""
    from inductor_doctor.fleet_merge import validate_check_report

    shown = str(path)
    try:
        if path.is_dir():
            raise UsageError(f"{shown}: is a directory, not a report")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_REPORT_BYTES + 1)
    except UsageError:
        raise
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise UsageError(f"{shown}: larger than {MAX_REPORT_BYTES // 2**20} MiB; not a check report")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{shown}: not UTF-8 text (byte {exc.start}); not a check report") from None
    if not text.strip():
        raise UsageError(f"{shown}: empty file; not a check report")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{shown}: not valid JSON ({exc}); truncated or not a check report?") from None
    except RecursionError:
        raise UsageError(f"{shown}: JSON nested too deeply; not a check report") from None
    return validate_check_report(data, shown)


def build_document(
    reports: Sequence[Dict[str, Any]],
    files: Sequence[Optional[str]] = (),
    missing: Sequence[Any] = (),
    meta: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    from inductor_doctor import __version__
    from inductor_doctor.fleet_merge import Merge, Source, build
    from inductor_doctor.kb import KB_VERSION

    files = list(files) + [None] * (len(reports) - len(files))
    sources = [Source(report=r, file=f, order=n) for n, (r, f) in enumerate(zip(reports, files))]
    return build(Merge(sources, list(missing)), __version__, KB_VERSION, meta)


def exit_code(document: Dict[str, Any], fail_on: FailOn, fail_on_warnings: bool) -> int:
    from inductor_doctor.fleet_merge import findings_of

    return int(exit_code_for(findings_of(document), fail_on, fail_on_warnings))


def merge_command(
    reports: List[Path],
    fmt: str,
    fail_on: FailOn,
    fail_on_warnings: bool,
    output: Optional[Path],
    redact: Optional[bool] = None,
) -> int:
    """`inductor-doctor merge a.json b.json ...`: exit 1 if any result reaches --fail-on, 2 on bad input."""
    from inductor_doctor.fleet_render import render_merge

    if not reports:
        raise UsageError("merge needs at least one report (`check --format json --output FILE`)")
    loaded = [load_report(p) for p in reports]
    document = build_document(loaded, [str(p) for p in reports])
    do_redact = (fmt == "markdown") if redact is None else redact
    emit(render_merge(document, fmt, redact=do_redact), output)
    return exit_code(document, fail_on, fail_on_warnings)


def run_distributed(
    request: Any,
    fmt: str,
    output: Optional[Path],
    fail_on: FailOn,
    fail_on_warnings: bool,
    redact: Optional[bool] = None,
) -> int:
    """`check --distributed` on one torchrun rank; rank 0 prints the fleet view, the others nothing."""
    from inductor_doctor.fleet_dist import run_rank

    return run_rank(request, fmt, output, fail_on, fail_on_warnings, redact)


__all__ = ["merge_command", "run_distributed", "load_report", "build_document", "exit_code", "ExitCode"]
