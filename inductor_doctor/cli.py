"""The command line: parse, call one function, render, pick the exit code. Nothing else.

Every command imports its machinery lazily, inside the command, so that `--help`, `list` and
`explain` cost milliseconds and never touch torch. Every option also reads an
`INDUCTOR_DOCTOR_<NAME>` environment variable, for Dockerfiles (`ENV INDUCTOR_DOCTOR_FORMAT=json`).
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import Any, List, Optional, Tuple

import click
import typer

from inductor_doctor import __version__
from inductor_doctor.files import emit
from inductor_doctor.model import ExitCode, FailOn, UsageError

app = typer.Typer(
    name="inductor-doctor",
    help="A doctor for the PyTorch compile stack: probe the toolchain, check known issues, explain failures.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


class Format(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class ProbeFormat(str, enum.Enum):
    text = "text"
    json = "json"


def _env(name: str) -> str:
    return f"INDUCTOR_DOCTOR_{name.upper()}"


def _split_ids(values: Optional[List[str]]) -> List[str]:
    out: List[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _version_callback(value: bool) -> None:
    if value:
        from inductor_doctor.kb import KB_VERSION

        typer.echo(f"inductor-doctor {__version__} (knowledge base {KB_VERSION})")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """A doctor for the PyTorch compile stack."""


PythonOpt = typer.Option(
    None,
    "--python",
    envvar=_env("python"),
    metavar="PATH",
    help="Diagnose this interpreter or venv instead of the current one; canaries run with it.",
)


@app.command()
def probe(
    live: bool = typer.Option(
        False, "--live", envvar=_env("live"), help="Add what only a live torch knows (one short subprocess)."
    ),
    fmt: ProbeFormat = typer.Option(ProbeFormat.text, "--format", envvar=_env("format")),
    python: Optional[str] = PythonOpt,
    output: Optional[Path] = typer.Option(None, "--output", "-o", envvar=_env("output")),
) -> int:
    """Toolchain report only: Python, glibc, torch, Triton, CUDA, GPUs, compiler, torch_xla, ABI."""
    from inductor_doctor.checkup import probe_report
    from inductor_doctor.render import render_probe

    report = probe_report(python=python, live=live)
    emit(render_probe(report, fmt.value), output)
    return ExitCode.OK


@app.command()
def check(
    fmt: Format = typer.Option(Format.text, "--format", envvar=_env("format")),
    only: Optional[List[str]] = typer.Option(None, "--only", envvar=_env("only"), metavar="ID[,ID...]"),
    skip: Optional[List[str]] = typer.Option(None, "--skip", envvar=_env("skip"), metavar="ID[,ID...]"),
    static: bool = typer.Option(
        False,
        "--static",
        envvar=_env("static"),
        help="No canaries: versions, files and symbols only (for docker build).",
    ),
    deep: bool = typer.Option(
        False, "--deep", envvar=_env("deep"), help="Also run the slow canaries (minutes)."
    ),
    timeout: Optional[float] = typer.Option(
        None, "--timeout", envvar=_env("timeout"), min=1, help="Per-canary timeout in seconds."
    ),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", envvar=_env("jobs"), min=1),
    fail_on: FailOn = typer.Option(FailOn.AFFECTED, "--fail-on", envvar=_env("fail_on")),
    fail_on_warnings: bool = typer.Option(False, "--fail-on-warnings", envvar=_env("fail_on_warnings")),
    python: Optional[str] = PythonOpt,
    no_cache: bool = typer.Option(False, "--no-cache", envvar=_env("no_cache")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", envvar=_env("output")),
    suppress: Optional[List[str]] = typer.Option(
        None,
        "--suppress",
        envvar=_env("suppress"),
        metavar="ID[,ID...]",
        help="Accept these findings (they never fail the run).",
    ),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        envvar=_env("config"),
        help="inductor-doctor.toml or pyproject.toml with suppressions.",
    ),
    redact: Optional[bool] = typer.Option(
        None,
        "--redact/--no-redact",
        envvar=_env("redact"),
        help="Hide secrets and user names (default: on for markdown).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", envvar=_env("quiet"), help="No progress display."),
    distributed: bool = typer.Option(
        False,
        "--distributed",
        envvar=_env("distributed"),
        help="Run on every torchrun rank and print one fleet matrix.",
    ),
) -> int:
    """Probe, then every known-issue check (static rules + canaries), then the matrix."""
    from inductor_doctor.checkup import CheckRequest, run_check
    from inductor_doctor.model import exit_code_for
    from inductor_doctor.render import render_report

    request = CheckRequest(
        python=python,
        static=static,
        deep=deep,
        timeout_s=timeout,
        jobs=jobs,
        only=_split_ids(only),
        skip=_split_ids(skip),
        use_cache=not no_cache,
        suppress=_split_ids(suppress),
        config=config,
        progress=not quiet,
    )
    if distributed:
        from inductor_doctor.fleet import run_distributed

        return run_distributed(request, fmt.value, output, fail_on, fail_on_warnings)
    report = run_check(request)
    do_redact = (fmt is Format.markdown) if redact is None else redact
    emit(render_report(report, fmt.value, redact=do_redact), output)
    if report.meta.get("interrupted"):
        return int(report.meta.get("exit_code", ExitCode.INTERRUPTED))
    return exit_code_for(report.findings, fail_on, fail_on_warnings)


@app.command()
def explain(
    issue: Optional[str] = typer.Argument(
        None, metavar="ISSUE", help="An id, an alias or an upstream ref (pytorch#151589)."
    ),
    log: Optional[str] = typer.Option(
        None, "--log", metavar="FILE|-", help="Triage a pasted error log or traceback."
    ),
    fmt: ProbeFormat = typer.Option(ProbeFormat.text, "--format", envvar=_env("format")),
    run_check_too: bool = typer.Option(
        False, "--check", help="With --log: confirm the matches here with `check --only`."
    ),
    python: Optional[str] = PythonOpt,
) -> int:
    """Explain one known issue, or triage a log (--log)."""
    if log is not None:
        from inductor_doctor.triage import triage_command

        return triage_command(log, fmt.value, run_check_too, python)
    if not issue:
        raise UsageError(
            "explain needs an ISSUE id, alias or ref, or --log FILE (try `inductor-doctor list`)"
        )
    from inductor_doctor.explain import explain_issue

    text = explain_issue(issue, fmt.value)
    emit(text, None)
    return ExitCode.OK


@app.command(name="list")
def list_(
    fmt: ProbeFormat = typer.Option(ProbeFormat.text, "--format", envvar=_env("format")),
) -> int:
    """Every known issue: id, title, devices, upstream refs."""
    from inductor_doctor.render import render_list

    emit(render_list(fmt.value), None)
    return ExitCode.OK


@app.command()
def plan(
    specs: Optional[List[str]] = typer.Argument(
        None, metavar="[SPEC]...", help="Requirement specs, e.g. torch==2.5.1 triton==3.1.0"
    ),
    requirements: Optional[List[Path]] = typer.Option(
        None, "-r", "--requirements", metavar="FILE", help="A requirements file or pyproject.toml."
    ),
    cxx: Optional[str] = typer.Option(None, "--cxx", envvar=_env("cxx")),
    cxxflags: Optional[str] = typer.Option(None, "--cxxflags", envvar=_env("cxxflags")),
    cuda: Optional[str] = typer.Option(None, "--cuda", envvar=_env("cuda")),
    driver: Optional[str] = typer.Option(None, "--driver", envvar=_env("driver")),
    gpu: Optional[str] = typer.Option(None, "--gpu", envvar=_env("gpu"), metavar="sm_XX"),
    python_version: Optional[str] = typer.Option(None, "--python-version", envvar=_env("python_version")),
    fmt: Format = typer.Option(Format.text, "--format", envvar=_env("format")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", envvar=_env("output")),
) -> int:
    """Predict which known issues a planned stack would hit, before installing anything."""
    from inductor_doctor.plan import PlanRequest, run_plan
    from inductor_doctor.render import render_report

    report = run_plan(
        PlanRequest(
            specs=list(specs or []),
            requirement_files=list(requirements or []),
            cxx=cxx,
            cxxflags=cxxflags,
            cuda=cuda,
            driver=driver,
            gpu=gpu,
            python_version=python_version,
        )
    )
    emit(render_report(report, fmt.value), output)
    return ExitCode.FINDINGS if report.meta.get("predicted") else ExitCode.OK


@app.command()
def merge(
    reports: List[Path] = typer.Argument(
        ..., metavar="REPORT.json...", help="`check --format json` reports."
    ),
    fmt: Format = typer.Option(Format.text, "--format", envvar=_env("format")),
    fail_on: FailOn = typer.Option(FailOn.AFFECTED, "--fail-on", envvar=_env("fail_on")),
    fail_on_warnings: bool = typer.Option(False, "--fail-on-warnings", envvar=_env("fail_on_warnings")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", envvar=_env("output")),
) -> int:
    """Fleet view: many check reports (hosts, ranks, GPUs) in one matrix, with their differences."""
    from inductor_doctor.fleet import merge_command

    return merge_command(reports, fmt.value, fail_on, fail_on_warnings, output)


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"inductor-doctor: {message}\n")
    sys.stderr.flush()
    return code


def _click_classes(name: str, *extra: Any) -> Tuple[Any, ...]:
    """click's exception classes of that name: typer ≥ 0.20 vendors its own click, older typer
    uses click itself, so a usage error may come from either."""
    mods: List[Any] = [click.exceptions]
    try:
        import typer._click.exceptions as vendored  # type: ignore[import-not-found]

        mods.append(vendored)
    except ImportError:
        pass
    found = tuple(getattr(m, name) for m in mods if hasattr(m, name))
    return found + tuple(extra)


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: every way out is an exit code, and only a doctor bug may show a traceback."""
    exits = _click_classes("Exit", typer.Exit)
    usage = _click_classes("UsageError")
    aborts = _click_classes("Abort", typer.Abort)
    try:
        rv = app(args=argv, prog_name="inductor-doctor", standalone_mode=False)
        return int(rv or 0)
    except exits as exc:
        return int(getattr(exc, "exit_code", 0))
    except usage as exc:
        exc.show()
        return ExitCode.USAGE
    except aborts:
        return _fail("interrupted", ExitCode.INTERRUPTED)
    except UsageError as exc:
        return _fail(str(exc), ExitCode.USAGE)
    except KeyboardInterrupt:
        return _fail("interrupted", ExitCode.INTERRUPTED)
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return ExitCode.OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if os.environ.get("INDUCTOR_DOCTOR_DEBUG"):
            raise
        return _fail(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in inductor-doctor, "
            "please report it (set INDUCTOR_DOCTOR_DEBUG=1 for the traceback)",
            ExitCode.DOCTOR_FAILED,
        )
