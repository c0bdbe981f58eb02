"""The command line: parse, call one command, render the document it returns, pick the exit code.

Commands live in their own packages and return documents (`to_dict()`, a `command` name); this
module alone renders them (`render/`), writes `--output` (the chosen format, for every command) and
maps them to the contract's exit codes. Each command imports its machinery lazily, so `--help`,
`list` and `explain` never load the probe, and nothing here ever imports torch.

Every option also reads `INDUCTOR_DOCTOR_<NAME>` (`INDUCTOR_DOCTOR_FORMAT=json`), for Dockerfiles.
A shared variable whose value a command cannot use (`INDUCTOR_DOCTOR_FORMAT=markdown` for `probe`)
is ignored by that command, not fatal: one `ENV` line must not break the other commands.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, List, Mapping, Optional, Sequence

import click

from inductor_doctor.core.codes import ExitCode, FailOn, UsageError
from inductor_doctor.core.document import Document, Policy
from inductor_doctor.core.version import __version__

ENV_PREFIX = "INDUCTOR_DOCTOR_"
FORMATS = ("text", "json", "markdown")
FAIL_ON = tuple(f.value for f in FailOn)
#: The one line a failing document whose report went to `--output` writes to stderr (`render.RENDERERS`).
FAILED_LINE = "failed-line"
ENV_EPILOG = (
    "Every option also reads INDUCTOR_DOCTOR_<OPTION> from the environment, e.g. "
    "INDUCTOR_DOCTOR_FORMAT=json, INDUCTOR_DOCTOR_FAIL_ON=likely."
)
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# --- option types: the same wording on every click release ---------------------------------------


class Choice(click.ParamType):
    name = "choice"

    def __init__(self, choices: Sequence[str]) -> None:
        self.choices = tuple(choices)

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return "[" + "|".join(self.choices) + "]"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        text = str(value).strip().lower()
        if text in self.choices:
            return text
        self.fail(f"{value!r} is not one of {', '.join(self.choices)}", param, ctx)


class Positive(click.ParamType):
    """A number >= 1 (seconds, jobs)."""

    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.name = "seconds" if kind is float else "number"

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return "SECONDS" if self.kind is float else "N"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, self.kind):
            number = value
        else:
            try:
                number = self.kind(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a {'number' if self.kind is float else 'whole number'}",
                          param, ctx)
        if not number >= 1:
            self.fail(f"{value!r} is below 1", param, ctx)
        return number


_TRUE = ("1", "true", "yes", "on", "t", "y")
_FALSE = ("0", "false", "no", "off", "f", "n", "")


class EnvOption(click.Option):
    """An option that also reads INDUCTOR_DOCTOR_<NAME>. A bad value is a usage error naming the
    variable, as a bad option is (a misspelt `FAIL_ON` must not quietly weaken a gate); a value only
    another command can use (`FORMAT=markdown` for `probe`) is ignored there."""

    def value_from_envvar(self, ctx: Any) -> Any:
        rv = super().value_from_envvar(ctx)
        raw = os.environ.get(str(self.envvar))
        if rv is None or raw is None:
            return rv
        if isinstance(self.type, Choice):
            if str(rv).strip().lower() in self.type.choices:
                return rv
            if raw.strip().lower() in _choices_elsewhere(str(self.envvar)):
                return None
            self._bad(ctx, raw, f"not one of {', '.join(self.type.choices)}")
        if self.is_flag and self.is_bool_flag:
            if raw.strip().lower() not in _TRUE + _FALSE:
                self._bad(ctx, raw, "not a yes/no value (1, 0, true, false, yes, no, on, off)")
            return raw.strip().lower() in _TRUE
        if not self.multiple and isinstance(self.type, Positive):
            try:
                self.type.convert(rv, self, ctx)
            except click.BadParameter as exc:
                self._bad(ctx, raw, exc.message)
        return rv

    def _bad(self, ctx: Any, raw: str, why: str) -> None:
        raise click.UsageError(f"{self.envvar}={raw!r}: {why}", ctx)


def _env_options() -> Iterator[click.Option]:
    for command in app.commands.values():
        for param in command.params:
            if isinstance(param, EnvOption):
                yield param


def _choices_elsewhere(envvar: str) -> set:
    """Every value some command accepts from `envvar` (a shared FORMAT serves several)."""
    return {c for p in _env_options() if p.envvar == envvar and isinstance(p.type, Choice)
            for c in p.type.choices}


def known_env_names() -> set:
    """Every INDUCTOR_DOCTOR_<NAME> the doctor reads: its options' and its own (envvars.DOCTOR_OWN)."""
    from inductor_doctor.core.envvars import DOCTOR_OWN, DOCTOR_PREFIX

    return {str(p.envvar) for p in _env_options()} | {DOCTOR_PREFIX + name for name in DOCTOR_OWN}


def unknown_env_warnings(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """One line per INDUCTOR_DOCTOR_* variable the doctor does not read (a misspelling, usually)."""
    import difflib

    environ = os.environ if environ is None else environ
    known = known_env_names()
    out = []
    for name in sorted(n for n in environ if n.startswith(ENV_PREFIX) and n not in known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        hint = f"; did you mean {close[0]}?" if close else " (`COMMAND --help` lists the options)"
        out.append(f"warning: {name} is not a variable inductor-doctor reads, ignored{hint}")
    return out


def option(*decls: str, env: Optional[str] = None, **kw: Any) -> Callable[[Any], Any]:
    """`click.option` reading INDUCTOR_DOCTOR_<ENV> (named after the long option by default)."""
    long = next((d for d in decls if d.startswith("--")), decls[0])
    name = env or long.lstrip("-").split("/")[0].replace("-", "_")
    return click.option(*decls, cls=EnvOption, envvar=ENV_PREFIX + name.upper(), **kw)


def format_option(choices: Sequence[str] = FORMATS, default: str = "text") -> Callable[[Any], Any]:
    return option("--format", "fmt", env="format", type=Choice(choices), default=default, show_default=True,
                  help="Output format (json: the document alone on stdout; progress goes to stderr).")


def output_option() -> Callable[[Any], Any]:
    return option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  metavar="FILE", help="Write the output (in the chosen --format) to FILE instead of stdout.")


def python_option() -> Callable[[Any], Any]:
    return option("--python", type=str, default=None, metavar="PATH",
                  help="Diagnose this interpreter or venv instead of the current one; canaries run with it.")


def fail_on_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = option("--fail-on-warnings", is_flag=True, default=False,
               help="Let warning-severity findings (silent degradations) fail the run too.")(f)
    return option("--fail-on", type=Choice(FAIL_ON), default="affected", show_default=True,
                  help="Exit 1 when a result is at least this bad (inconclusive: also when nothing "
                       "could be checked).")(f)


def redact_option() -> Callable[[Any], Any]:
    return option("--redact/--no-redact", default=None,
                  help="Hide secrets, user names and host names (default: on for markdown).")


def split_ids(values: Sequence[str]) -> List[str]:
    return [x.strip() for v in values or () for x in str(v).split(",") if x.strip()]


# --- the commands ----------------------------------------------------------------------------------


def _print_version(ctx: Any, param: Any, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from inductor_doctor.kb import KB_VERSION

    click.echo(f"inductor-doctor {__version__} (knowledge base {KB_VERSION})")
    ctx.exit(0)


@click.group(context_settings=CONTEXT, invoke_without_command=True)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the version and the knowledge base's date, then exit.")
@click.pass_context
def app(ctx: Any) -> None:
    """A doctor for the PyTorch compile stack: probe the toolchain, check the known torch.compile /
    Inductor / Triton / XLA issues on every device, explain failures.

    Start with `inductor-doctor check`; `inductor-doctor explain --log FILE` reads a failing log.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="The toolchain report alone.")
@option("--live", is_flag=True, default=False,
        help="Add what only a live torch knows (loaded libraries, device properties): one short subprocess.")
@format_option(("text", "json"))
@python_option()
@output_option()
def probe(live: bool, fmt: str, python: Optional[str], output: Optional[Path]) -> int:
    """The toolchain report alone: Python, glibc, torch, Triton, CUDA, GPUs, compilers, torch_xla, ABI."""
    from inductor_doctor.commands.probe import probe_report

    return deliver(probe_report(python=python, live=live), fmt, output)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Check every known issue here.")
@format_option()
@option("--only", multiple=True, metavar="ID[,ID...]", help="Check only these issues (ids, aliases or refs).")
@option("--skip", multiple=True, metavar="ID[,ID...]", help="Leave these issues out.")
@option("--static", is_flag=True, default=False,
        help="No canaries on this machine's devices: versions, files and symbols only (what a docker "
             "build with no GPU can do); --gpu targets are still compiled for.")
@option("--deep", is_flag=True, default=False, help="Also run the slow canaries (minutes).")
@option("--timeout", type=Positive(float), default=None, help="Per-canary timeout in seconds.")
@option("--jobs", "-j", type=Positive(int), default=None,
        help="Canaries run at once (default: by cores and memory).")
@fail_on_options
@python_option()
@option("--no-cache", is_flag=True, default=False,
        help="Re-run every canary instead of reusing a verdict whose inputs have not changed.")
@output_option()
@option("--suppress", multiple=True, metavar="ID[,ID...]",
        help="Accept these findings: shown, but they never fail the run.")
@option("--config", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
        help="inductor-doctor.toml or pyproject.toml with [[suppress]] entries.")
@redact_option()
@option("--all", "show_all", is_flag=True, default=False,
        help="Text output: also list the issues that cannot arise here (not-applicable).")
@option("--quiet", "-q", is_flag=True, default=False, help="No progress display on stderr.")
@option("--distributed", is_flag=True, default=False,
        help="Under torchrun: every rank checks its own devices, rank 0 prints one fleet matrix.")
@option("--artifact", "artifacts", multiple=True, metavar="PATH",
        help="Also check that this .pt2 package, cache blob or cache directory loads here (repeatable).")
@option("--gpu", multiple=True, metavar="sm_XX|gfxNNN",
        help="Also a GPU that is not here (repeatable): a column each, earned by compiling the canary "
             "kernels for it with this Triton and its assembler (even with --static; nothing is run on it).")
@option("--driver", metavar="VERSION", default=None,
        help="With --gpu: the NVIDIA driver those GPUs will have, e.g. 570.86.15.")
def check(fmt: str, only: Sequence[str], skip: Sequence[str], static: bool, deep: bool,
          timeout: Optional[float], jobs: Optional[int], fail_on: str, fail_on_warnings: bool,
          python: Optional[str], no_cache: bool, output: Optional[Path], suppress: Sequence[str],
          config: Optional[Path], redact: Optional[bool], show_all: bool, quiet: bool,
          distributed: bool, artifacts: Sequence[str], gpu: Sequence[str], driver: Optional[str]) -> int:
    """Probe, then check every known issue (static rules and canaries) on every device: the matrix."""
    from inductor_doctor.commands.check import CheckRequest

    request = CheckRequest(python=python, static=static, deep=deep, timeout_s=timeout, jobs=jobs,
                           only=split_ids(only), skip=split_ids(skip), use_cache=not no_cache,
                           suppress=split_ids(suppress), config=config, artifacts=list(artifacts),
                           gpus=list(gpu), driver=driver)
    policy: Policy = (FailOn(fail_on), fail_on_warnings)
    if distributed:
        from inductor_doctor.commands.distributed import run_rank

        outcome = run_rank(request)
        if outcome.document is None:  # ranks other than 0 hand their report over and say nothing
            return outcome.exit_code
        return deliver(outcome.document, fmt, output, redact, policy)
    from inductor_doctor.commands.check import check as run_check
    from inductor_doctor.render.progress import progress_display

    with progress_display(enabled=not quiet) as progress:
        report = run_check(request, progress)
    return deliver(report, fmt, output, redact, policy, show_all=show_all)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="One redacted block for a bug report.")
@option("--log", metavar="FILE|-", default=None, help="Add the triage of the failing log (- reads stdin).")
@option("--static", is_flag=True, default=False, help="No canaries: versions, files and symbols only.")
@format_option(("markdown", "json"), default="markdown")
@python_option()
@output_option()
@option("--no-redact", "no_redact", is_flag=True, default=False,
        help="Keep user names and secret-looking values (the report is redacted by default).")
@option("--quiet", "-q", is_flag=True, default=False, help="No progress display on stderr.")
def report(log: Optional[str], static: bool, fmt: str, python: Optional[str], output: Optional[Path],
           no_redact: bool, quiet: bool) -> int:
    """What a bug report needs, in one collapsible Markdown block: torch's collect_env (every field),
    the compile-stack facts, the known-issue verdicts, and with --log the failing log's triage."""
    from inductor_doctor.commands.report import report as build_report
    from inductor_doctor.render.progress import progress_display

    with progress_display(enabled=not quiet) as progress:
        document = build_report(python=python, log=log, static=static, progress=progress)
    return deliver(document, fmt, output, not no_redact)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Workarounds, tried here, as commands.")
@option("--shell", "as_shell", is_flag=True, default=False,
        help="Print export/unset lines to eval: the verified workarounds; advice as comments.")
@option("--dockerfile", "as_dockerfile", is_flag=True, default=False,
        help="Print ENV/RUN lines for a Dockerfile: the verified workarounds; advice as comments.")
@format_option(("text", "json"))
@option("--no-verify", "no_verify", is_flag=True, default=False,
        help="Do not re-run the checks with each environment workaround applied (nothing is verified).")
@python_option()
@output_option()
@option("--quiet", "-q", is_flag=True, default=False, help="No progress display on stderr.")
def fix(as_shell: bool, as_dockerfile: bool, fmt: str, no_verify: bool, python: Optional[str],
        output: Optional[Path], quiet: bool) -> int:
    """The last check's workarounds as commands: each environment workaround is tried here first (the
    issue's check re-run with it applied) and offered as a command only if it came out clean; the rest
    is advice. Never changes the system: eval "$(inductor-doctor fix --shell)" is yours to run."""
    if as_shell and as_dockerfile:
        raise UsageError("fix takes --shell or --dockerfile, not both")
    from inductor_doctor.commands.fix import build_fix
    from inductor_doctor.render.progress import progress_display

    with progress_display(enabled=not quiet) as progress:
        document = build_fix(python=python, verify=not no_verify, progress=progress)
    chosen = "shell" if as_shell else "dockerfile" if as_dockerfile else fmt
    return deliver(document, chosen, output, redact=False)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Explain an issue, or triage a log.")
@click.argument("issue", required=False, metavar="[ISSUE]")
@option("--log", metavar="FILE|-", default=None,
        help="Triage a pasted error log or traceback (- reads stdin) instead of explaining one issue.")
@option("--full", is_flag=True, default=False,
        help="The whole page: background, every workaround, the canary's source, every reference.")
@format_option(("text", "json"))
@option("--check", "confirm", is_flag=True, default=False,
        help="With --log: confirm the matches on this machine (runs `check --only` on them).")
@option("--match", "match_at", type=Choice(("sure", "possible")), default="sure", show_default=True,
        help="With --log: what exits 0: a sure match only (\"this is X\"), or a possible one too "
             "(\"this looks like X\").")
@python_option()
def explain(issue: Optional[str], log: Optional[str], full: bool, fmt: str, confirm: bool, match_at: str,
            python: Optional[str]) -> int:
    """Explain one known issue (an id, alias or upstream ref such as pytorch#151589), or triage a log."""
    if log is not None:
        if issue:
            raise UsageError(f"explain takes ISSUE or --log, not both (got {issue!r} and --log {log})")
        from inductor_doctor.commands.triage import triage

        return deliver(triage(log, confirm=confirm, python=python, match_at=match_at), fmt, None)
    if not issue:
        raise UsageError("explain needs an ISSUE id, alias or ref, or --log FILE "
                         "(see `inductor-doctor list`)")
    if confirm:
        raise UsageError("--check goes with --log (to confirm a triage on this machine)")
    from inductor_doctor.commands.explain import issue_page

    return deliver(issue_page(issue, python=python), fmt, None, full=full)


@app.command(name="list", context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Every known issue.")
@format_option(("text", "json"))
def list_(fmt: str) -> int:
    """Every known issue: id, devices, severity, title."""
    from inductor_doctor.commands.explain import issue_list

    return deliver(issue_list(), fmt, None)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Predict issues before installing.")
@click.argument("specs", nargs=-1, metavar="[SPEC]...")
@click.option("-r", "--requirements", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
              help="A requirements file or pyproject.toml (repeatable).")
@option("--cxx", metavar="COMPILER", default=None,
        help="The C++ compiler the stack will use, e.g. g++-9 or clang++-19 (read from its name only).")
@option("--cxxflags", metavar="FLAGS", default=None, help="Its flags, e.g. -fclang-abi-compat=17.")
@option("--cuda", metavar="VERSION", default=None, help="The CUDA toolkit, e.g. 12.4 or cu124.")
@option("--driver", metavar="VERSION", default=None, help="The NVIDIA driver, e.g. 535.104.05.")
@option("--gpu", metavar="sm_XX", multiple=True,
        help="The GPU's compute capability, e.g. sm_90 or 8.6 (repeat for several GPUs with --suggest).")
@option("--python-version", metavar="X.Y", default=None,
        help="The Python, e.g. 3.12 or 3.13t (default: this one).")
@option("--index-url", metavar="URL", default=None,
        help="The index torch comes from, e.g. https://download.pytorch.org/whl/cpu (decides the build).")
@option("--artifact", "artifacts", multiple=True, metavar="PATH",
        help="A .pt2 package, cache blob or cache directory the stack must load (repeatable).")
@option("--suggest", is_flag=True, default=False,
        help="Say what to install: the newest torch (and its Triton) with no known issue on this machine, "
             "or on the one --gpu/--driver/--python-version/--cxx describe, as pip and uv lines.")
@option("--xla", is_flag=True, default=False, help="With --suggest: include torch_xla.")
@option("--verify", is_flag=True, default=False,
        help="With --suggest: install the answer into a scratch venv of the doctor's own and check it there.")
@option("--keep", is_flag=True, default=False,
        help="With --verify: keep the scratch venv (its path is shown).")
@format_option()
@output_option()
def plan(specs: Sequence[str], requirements: Sequence[Path], cxx: Optional[str], cxxflags: Optional[str],
         cuda: Optional[str], driver: Optional[str], gpu: Sequence[str], python_version: Optional[str],
         index_url: Optional[str], artifacts: Sequence[str], suggest: bool, xla: bool, verify: bool,
         keep: bool, fmt: str, output: Optional[Path]) -> int:
    """Predict which known issues a planned stack would hit, before installing anything; with
    --suggest, say what to install."""
    from inductor_doctor.core.model import UsageError

    if suggest:
        from inductor_doctor.commands.suggest import SuggestRequest, run_suggest

        if specs or artifacts:
            raise UsageError("plan --suggest takes no SPEC or --artifact: put constraints in a requirements "
                             "file (-r)")
        if fmt == "markdown":
            raise UsageError("plan --suggest has text and json output")
        request = SuggestRequest(gpus=list(gpu), driver=driver, python_version=python_version, cxx=cxx,
                                 requirement_files=[str(r) for r in requirements], xla=xla, verify=verify,
                                 keep=keep)
        return deliver(run_suggest(request), fmt, output)
    if verify or keep or xla:
        raise UsageError("--verify, --keep and --xla go with --suggest")
    if len(gpu) > 1:
        raise UsageError("plan takes one --gpu (plan --suggest takes several)")
    from inductor_doctor.commands.plan import run_plan
    from inductor_doctor.plan.resolve import PlanRequest

    request = PlanRequest(specs=list(specs), requirement_files=list(requirements), cxx=cxx, cxxflags=cxxflags,
                          cuda=cuda, driver=driver, gpu=gpu[0] if gpu else None,
                          python_version=python_version, index_url=index_url, artifacts=list(artifacts))
    return deliver(run_plan(request), fmt, output)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG, short_help="Many check reports in one view.")
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="REPORT.json...")
@format_option()
@fail_on_options
@output_option()
@redact_option()
@option("--all", "show_all", is_flag=True, default=False,
        help="Text output: also list the issues that cannot arise anywhere (not-applicable).")
def merge(reports: Sequence[Path], fmt: str, fail_on: str, fail_on_warnings: bool, output: Optional[Path],
          redact: Optional[bool], show_all: bool) -> int:
    """Fleet view: many `check --format json` reports (hosts, ranks, GPUs) in one matrix."""
    from inductor_doctor.commands.merge import merge_reports

    return deliver(merge_reports(list(reports)), fmt, output, redact, (FailOn(fail_on), fail_on_warnings),
                   show_all=show_all)


PASSTHROUGH = {**CONTEXT, "ignore_unknown_options": True, "allow_interspersed_args": False}


@app.command(context_settings=PASSTHROUGH, epilog=ENV_EPILOG,
             short_help="Run a command; diagnose it if it fails.")
@option("--report", metavar="FILE", default=None,
        help="On failure, also write the report block (redacted Markdown, with the triage) to FILE.")
@option("--timeout", type=Positive(float), default=None,
        help="Per-canary timeout of the checks run on failure.")
@click.option("--output", "-o", metavar="FILE", default=None,
              help="On failure, also write the diagnosis as JSON to FILE.")
@option("--no-check", "no_check", is_flag=True, default=False,
        help="On failure, triage only: do not run the matched issues' checks here.")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARG]...")
def run(report: Optional[str], timeout: Optional[float], output: Optional[str], no_check: bool,
        cmd: Sequence[str]) -> int:
    """Run CMD unchanged: the same stdin, stdout and stderr as it streams, the same exit status, signals
    passed on. If it fails, its output is triaged and, after it, the doctor prints (on stderr) the known
    issue it matches and how sure, that issue's checks run here now, and the workaround; or that no
    known issue matched, and the `why` command to run next. While CMD succeeds the doctor adds nothing."""
    from inductor_doctor._run import RunRequest, execute
    from inductor_doctor.run.process import reraise

    request = RunRequest(list(cmd), report, timeout, output, not no_check)
    completed, document, trouble = execute(request)
    if document is not None or trouble:
        finish_run(request, document, trouble)
    return reraise(completed)


def finish_run(request: Any, document: Any, trouble: Optional[str]) -> None:
    """After the program's own output, on stderr: the diagnosis (and its --report and --output files)."""
    from inductor_doctor.render import render

    try:
        if document is not None:
            if document.report_document is not None:
                write_report(document.report_document, request.report)
            sys.stderr.write(render(document, "text"))
            if request.output:
                from inductor_doctor.core.files import write_output

                write_output(Path(request.output), render(document, "json"))
        if trouble:
            sys.stderr.write(f"inductor-doctor: {trouble}\n")
    except Exception as exc:  # noqa: BLE001 - never change the command's status over the doctor's words
        sys.stderr.write(f"inductor-doctor: could not print the diagnosis ({type(exc).__name__}: {exc})\n")
    sys.stderr.flush()


def write_report(document: Any, path: str) -> None:
    """`--report FILE` of `run` and `why`: the report block, redacted Markdown, into FILE."""
    from inductor_doctor.core.files import write_output
    from inductor_doctor.render import render

    write_output(Path(path), render(document, "markdown", redact=True))


@app.command(context_settings=PASSTHROUGH, epilog=ENV_EPILOG,
             short_help="Which variation (caches, compiler, settings, backend) flips a failing command.")
@option("--all", "run_all", is_flag=True, default=False,
        help="Run every variation instead of stopping at the first that decides.")
@option("--jobs", "-j", type=Positive(int), default=None,
        help="Runs at once (default: half the cores, at most 4).")
@option("--timeout", type=Positive(float), default=None,
        help="Per-run timeout in seconds (default: 4x the first run, at least 120).")
@option("--report", metavar="FILE", default=None,
        help="Also write the report block (redacted Markdown, with the failure's triage) to FILE.")
@option("--versions", is_flag=True, default=False,
        help="When the cause is in the compiler, also try the newest torch release and the previous minor "
             "one, each installed in a scratch venv (downloads torch; removed afterwards).")
@format_option(("text", "json"))
@output_option()
@option("--quiet", "-q", is_flag=True, default=False, help="No progress lines on stderr.")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARG]...")
def why(run_all: bool, jobs: Optional[int], timeout: Optional[float], report: Optional[str], versions: bool,
        fmt: str, output: Optional[Path], quiet: bool, cmd: Sequence[str]) -> int:
    """Differential diagnosis of a failing command: re-run it (each run in its own process group, with
    its own fresh caches and a timeout) with fresh Inductor/Triton caches, the matched issue's
    workarounds, each group of your TORCHINDUCTOR_/TRITON_/TORCH_/compiler settings removed,
    torch.compile disabled, compile workers off, each other C++ compiler here, and the backend stepped
    down to "eager" and "aot_eager"; say which one flips it. Nothing of yours is changed."""
    from inductor_doctor.commands.why import WhyRequest
    from inductor_doctor.commands.why import why as run_why

    def say(message: str) -> None:
        if not quiet:
            sys.stderr.write(f"inductor-doctor why: {message}\n")
            sys.stderr.flush()

    document = run_why(WhyRequest(list(cmd), run_all=run_all, jobs=jobs, timeout_s=timeout, report=report,
                                  versions=versions), say)
    if report and document.report_document is not None:
        write_report(document.report_document, report)
    return deliver(document, fmt, output)


@app.command(context_settings=CONTEXT, epilog=ENV_EPILOG,
             short_help="The exception hook, for a whole environment.")
@option("--install-pth", "install_pth", is_flag=True, default=False,
        help="Write inductor_doctor_hook.pth into the interpreter's site-packages: every run of it "
             "gets the hook.")
@option("--remove-pth", "remove_pth", is_flag=True, default=False, help="Remove that file again.")
@python_option()
@format_option(("text", "json"))
def hook(install_pth: bool, remove_pth: bool, python: Optional[str], fmt: str) -> int:
    """The exception hook (inductor_doctor.hook.install()) for every program of an environment: a
    compile-stack exception carries the doctor's triage as a note. With neither option, says whether
    it is installed. `pip install` never installs it; this is the only way in."""
    from inductor_doctor.commands.hook import hook_pth

    return deliver(hook_pth(python, install_pth, remove_pth), fmt, None)


# --- documents out ---------------------------------------------------------------------------------


def deliver(document: Document, fmt: str, output: Optional[Path], redact: Optional[bool] = None,
            policy: Policy = None, **view: Any) -> int:
    """Render `document` in `fmt`, write it to `output` or stdout, and return its exit code
    (`Document.exit_code`): the same for every command."""
    from inductor_doctor.core.files import emit
    from inductor_doctor.render import render, renders

    do_redact = (fmt == "markdown") if redact is None else redact
    emit(render(document, fmt, redact=do_redact, **view), output)
    code = document.exit_code(policy)
    if output is not None and code == ExitCode.FINDINGS and renders(document, FAILED_LINE):
        # The report is in a file: the step that fails still says why, on one line (a build log).
        sys.stderr.write(render(document, FAILED_LINE, output=str(output)) + "\n")
        sys.stderr.flush()
    return code


# --- the entry point -------------------------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"inductor-doctor: {message}\n")
    sys.stderr.flush()
    return code


def _usage_line(exc: Any) -> str:
    """click's usage error as one line that says where to look."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "inductor-doctor"
    return f"{exc.format_message()} (see `{where} --help`)"


def broken_install(exc: BaseException) -> bool:
    """An import that failed after start-up (rich is imported only when output is rendered): a
    dependency missing or broken, or a module of the doctor's own gone; never a finding, and (as
    `_entry.py` says of a failure before start-up) repaired by reinstalling."""
    if isinstance(exc, ModuleNotFoundError):
        return True
    if isinstance(exc, ImportError):
        return (getattr(exc, "name", None) or "").split(".")[0] != "inductor_doctor"
    return False


def main(argv: Optional[List[str]] = None) -> int:
    """Every way out is an exit code; only a doctor bug (exit 3) may mention a traceback."""
    try:
        return _main(argv)
    finally:
        _warn_refused_cache()


def _warn_refused_cache() -> None:
    """One line on stderr when the cache directory was refused (paths.untrusted): the command ran
    uncached, as pip does with a cache it does not own."""
    from inductor_doctor.core.paths import cache_refusal

    line = cache_refusal()
    if line:
        try:
            sys.stderr.write(f"inductor-doctor: {line}\n")
            sys.stderr.flush()
        except OSError:
            pass


def _main(argv: Optional[List[str]]) -> int:
    try:
        for line in unknown_env_warnings():
            sys.stderr.write(f"inductor-doctor: {line}\n")
        rv = app.main(args=argv, prog_name="inductor-doctor", standalone_mode=False)
        return int(rv or 0)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.UsageError as exc:
        return _fail(_usage_line(exc), ExitCode.USAGE)
    except click.exceptions.Abort as exc:  # click's wrapping of Ctrl-C (or of our SIGTERM)
        terminated = type(exc.__cause__).__name__ == "Terminated"
        return _fail("terminated" if terminated else "interrupted",
                     ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
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
        if broken_install(exc):
            what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
            return _fail(f"a dependency of the doctor cannot be imported ({what}); the doctor's own "
                         "installation is broken — reinstall it with "
                         f"`{sys.executable} -m pip install --force-reinstall inductor-doctor`",
                         ExitCode.DOCTOR_FAILED)
        return _fail(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in inductor-doctor, "
            "please report it (set INDUCTOR_DOCTOR_DEBUG=1 for the traceback)",
            ExitCode.DOCTOR_FAILED,
        )
