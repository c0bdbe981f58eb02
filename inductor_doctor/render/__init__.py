"""Renderers: a `Report` in, text out. Checks never print; only the CLI writes what these return."""

from __future__ import annotations

from typing import Any, Dict

from inductor_doctor.model import Report


def render_report(report: Report, fmt: str, redact: bool = False) -> str:
    data: Dict[str, Any] = report.to_dict()
    if redact:
        from inductor_doctor.render.redact import redact_report

        data = redact_report(data)
    if fmt == "json":
        from inductor_doctor.render.json_out import to_json

        return to_json(data)
    if fmt == "markdown":
        from inductor_doctor.render.markdown import report_markdown

        return report_markdown(data)
    from inductor_doctor.render.text import report_text

    return report_text(data)


def render_probe(report: Report, fmt: str) -> str:
    data = report.to_dict()
    if fmt == "json":
        from inductor_doctor.render.json_out import to_json

        data.pop("results", None)
        data.pop("summary", None)
        return to_json(data)
    from inductor_doctor.probe.report import probe_to_text
    from inductor_doctor.render.text import use_color

    text = probe_to_text(report.environment, color=use_color())
    seconds = report.meta.get("duration_s")
    return text + (f"\nprobed in {seconds:.2f}s\n" if seconds is not None else "")


def render_list(fmt: str) -> str:
    from inductor_doctor.kb import KB_VERSION, registry

    reg = registry()
    if fmt == "json":
        from inductor_doctor import __version__
        from inductor_doctor.render.json_out import to_json

        return to_json(
            {
                "schema": "inductor-doctor/list/v1",
                "tool_version": __version__,
                "kb_version": KB_VERSION,
                "issues": [i.to_dict() for i in reg],
                "plugin_errors": [{"entry_point": n, "error": e} for n, e in reg.plugin_errors],
            }
        )
    from inductor_doctor.render.text import list_text

    return list_text(reg)
