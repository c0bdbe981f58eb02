"""`merge`: many `check` reports read from files, in one fleet view.

It ends in the same `merge/v1` document as `check --distributed` (commands/distributed.py), built by
fleet/document.py. `merge` only reads files: it never runs, imports or evaluates anything found
in a report.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, Sequence

from inductor_doctor.core.model import UsageError
from inductor_doctor.fleet.document import MergeDocument, build_document, validate_check_report

#: A report bigger than this is not a `check` report (they are tens of kilobytes).
MAX_REPORT_BYTES = 64 * 1024 * 1024


def load_report(path: Path) -> Dict[str, Any]:
    """A validated `check` report; anything else is a UsageError naming the file in one line."""
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


def merge_reports(paths: Sequence[Path]) -> MergeDocument:
    """`inductor-doctor merge a.json b.json ...`: every report read and validated, then one view."""
    if not paths:
        raise UsageError("merge needs at least one report (`check --format json --output FILE`)")
    reports, files, notes = [], [], []
    seen: Dict[str, str] = {}
    for path in paths:
        report = load_report(path)
        digest = hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()
        if digest in seen:
            notes.append(f"{path} is the same report as {seen[digest]}: counted once")
            continue
        seen[digest] = str(path)
        reports.append(report)
        files.append(str(path))
    return build_document(reports, files, meta={"notes": notes} if notes else None)
