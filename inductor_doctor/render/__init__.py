"""Renderers: a command's document in, text out. Commands never print; only the CLI writes this.

One module per document and format (`check_text`, `check_markdown`, `probe_text`, `list_text`,
`explain_text`, `triage_text`, `fleet_text`, `fleet_markdown`, `report_markdown`,
`fix_shell`, ...); JSON is the document itself. Each
renderer reads the document's `to_dict()` — the same data `--format json` prints — so the formats
cannot say different things. Adding a format is adding a module and a line to `RENDERERS`.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, Tuple

from inductor_doctor.core.codes import UsageError

#: (document command, format) -> renderer module; its `render(data, **view)` returns the text.
RENDERERS: Dict[Tuple[str, str], str] = {
    ("check", "text"): "check_text",
    ("check", "markdown"): "check_markdown",
    ("plan", "text"): "check_text",
    ("plan", "markdown"): "check_markdown",
    ("probe", "text"): "probe_text",
    ("list", "text"): "list_text",
    ("explain", "text"): "explain_text",
    ("triage", "text"): "triage_text",
    ("merge", "text"): "fleet_text",
    ("merge", "markdown"): "fleet_markdown",
    ("report", "markdown"): "report_markdown",
    ("fix", "text"): "fix_text",
    ("run", "text"): "run_text",
    ("why", "text"): "why_text",
    ("hook", "text"): "hook_text",
    ("fix", "shell"): "fix_shell",
    ("fix", "dockerfile"): "fix_dockerfile",
    ("suggest", "text"): "suggest_text",
    # Not a --format: the one line on stderr when a failing check or plan wrote its report to a file.
    ("check", "failed-line"): "failed_line",
    ("plan", "failed-line"): "failed_line",
}


def renders(document: Any, fmt: str) -> bool:
    """Whether `document` has a renderer for `fmt` (JSON: every document)."""
    return fmt == "json" or (document.command, fmt) in RENDERERS


def render(document: Any, fmt: str, redact: bool = False, **view: Any) -> str:
    """`document` (anything with `command` and `to_dict()`) as `fmt`; `view` tunes the text form."""
    data: Dict[str, Any] = document.to_dict()
    if redact:
        from inductor_doctor.render.redact import redact_report

        data = redact_report(data)
    if fmt == "json":
        from inductor_doctor.render.json_out import to_json

        return to_json(data)
    module = RENDERERS.get((document.command, fmt))
    if module is None:
        raise UsageError(f"{document.command} has no {fmt} output")
    renderer = importlib.import_module(f"inductor_doctor.render.{module}")
    return renderer.render(data, **view)
