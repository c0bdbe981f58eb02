"""The flow of `probe` and `check`: fingerprint, cache, probe, engine, suppressions, report.

This is the only place that ties the pieces together; each piece stays testable on its own.
"""

from __future__ import annotations

import os
import platform
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor import __version__
from inductor_doctor.model import (
    Basis,
    ExitCode,
    Finding,
    KnownIssue,
    Report,
    Status,
    UsageError,
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so that the same clean-up path kills every canary."""


@dataclass
class CheckRequest:
    python: Optional[str] = None
    static: bool = False
    deep: bool = False
    timeout_s: Optional[float] = None
    jobs: Optional[int] = None
    only: Sequence[str] = ()
    skip: Sequence[str] = ()
    use_cache: bool = True
    suppress: Sequence[str] = ()
    config: Optional[Path] = None
    progress: bool = True
    live: bool = True  # check always includes the live facts, except with --static
    extra_meta: Dict[str, Any] = field(default_factory=dict)
    #: (local rank, local world size) under `check --distributed`: this rank's share of the node's
    #: devices (fleet_shard.py); None checks every device here.
    shard: Optional[Tuple[int, int]] = None


def resolve_python(python: Optional[str]) -> str:
    """`--python` may name an interpreter or a venv directory; a path that is not there is a usage error."""
    if not python:
        return sys.executable
    path = Path(python).expanduser()
    if path.is_dir():
        for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if candidate.exists():
                return str(candidate)
        raise UsageError(f"--python {python}: a directory with no bin/python; give the interpreter's path")
    if not path.exists():
        import shutil

        found = shutil.which(python)
        if found:
            return found
        raise UsageError(f"--python {python}: no such file; give the path of a Python interpreter or venv")
    if not os.access(path, os.X_OK):
        raise UsageError(f"--python {python}: not executable; give the path of a Python interpreter or venv")
    return str(path)


def host_info() -> Dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "os": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "rank": _int_env("RANK"),
        "local_rank": _int_env("LOCAL_RANK"),
        "world_size": _int_env("WORLD_SIZE"),
    }


def _int_env(name: str) -> Optional[int]:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


def _environment(facts: Any) -> Dict[str, Any]:
    env = facts.to_dict()
    env["host"] = host_info()
    return env


def probe_report(python: Optional[str] = None, live: bool = False) -> Report:
    from inductor_doctor.kb import KB_VERSION
    from inductor_doctor.probe import gather

    target = resolve_python(python)
    facts = gather(target, live=live)
    return Report(
        command="probe",
        environment=_environment(facts),
        findings=[],
        tool_version=__version__,
        kb_version=KB_VERSION,
        meta={"live": live, "duration_s": round(facts.duration_s, 3)},
    )


def select_issues(only: Sequence[str], skip: Sequence[str]) -> List[KnownIssue]:
    """The issues to check; an unknown id in --only/--skip is a usage error naming the closest ones."""
    from inductor_doctor.kb import registry

    reg = registry()
    chosen: Dict[str, KnownIssue] = {}
    for name in only:
        issue = reg.find(name)
        if issue is None:
            raise UsageError(_unknown(name, reg.closest(name)))
        chosen[issue.id] = issue
    skipped = set()
    for name in skip:
        issue = reg.find(name)
        if issue is None:
            raise UsageError(_unknown(name, reg.closest(name)))
        skipped.add(issue.id)
    base = list(chosen.values()) if only else list(reg)
    return [i for i in base if i.id not in skipped]


def _unknown(name: str, closest: Sequence[str]) -> str:
    hint = f"; did you mean {', '.join(closest)}?" if closest else "; see `inductor-doctor list`"
    return f"unknown issue {name!r}{hint}"


def _install_sigterm() -> Any:
    def handler(signum: int, frame: Any) -> None:
        raise Terminated()

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return None


def run_check(request: CheckRequest) -> Report:
    from inductor_doctor import cache
    from inductor_doctor.engine import CheckOptions, run_checks
    from inductor_doctor.kb import KB_VERSION, registry
    from inductor_doctor.runner import default_jobs
    from inductor_doctor.suppressions import apply_suppressions, load_suppressions

    start = time.monotonic()
    issues = select_issues(request.only, request.skip)
    python = resolve_python(request.python)
    suppressions = load_suppressions(request.config, request.suppress)
    options = {
        "static": request.static,
        "deep": request.deep,
        "timeout": request.timeout_s,
        "issues": sorted(i.id for i in issues),
    }
    if request.shard is not None:
        from inductor_doctor import fleet_shard

        options["shard"] = list(request.shard)
        issues = fleet_shard.shard_issues(issues, request.shard)
    meta: Dict[str, Any] = {"cached": False, **request.extra_meta}
    plugin_errors = registry().plugin_errors
    if plugin_errors:
        meta["plugin_errors"] = [{"entry_point": n, "error": e} for n, e in plugin_errors]

    key = cache.fingerprint(python, options) if request.use_cache else None
    cached = cache.load(key) if key else None
    if cached is not None:
        findings = [Finding.from_dict(d) for d in cached["results"]]
        findings, notes = apply_suppressions(findings, suppressions)
        # The verdicts are the cached run's; who is asking (host, torchrun rank) is this run's.
        meta = {**cached.get("meta", {}), **meta, "cached": True, "suppression_notes": notes}
        meta["duration_s"] = round(time.monotonic() - start, 3)
        environment = {**cached["environment"], "host": host_info()}
        return Report("check", environment, findings, __version__, KB_VERSION, meta)

    previous = _install_sigterm()
    try:
        from inductor_doctor.probe import gather

        facts = gather(python, live=request.live and not request.static, use_cache=request.use_cache)
        if request.shard is not None:
            fleet_shard.shard_facts(facts, request.shard)
        target_error = facts.python.error
        if target_error:
            findings = [
                Finding(
                    i.id,
                    i.title,
                    "toolchain",
                    Status.INCONCLUSIVE,
                    Basis.STATIC,
                    f"could not run the target interpreter: {target_error}",
                    i.severity,
                    upstream=i.upstream,
                )
                for i in issues
            ]
            result = None
        else:
            jobs = request.jobs or default_jobs(len(facts.gpus))
            progress = _progress(request.progress)
            with progress:
                result = run_checks(
                    facts,
                    issues,
                    CheckOptions(
                        python=python,
                        static=request.static,
                        deep=request.deep,
                        timeout_s=request.timeout_s,
                        jobs=jobs,
                    ),
                    progress.callbacks(),
                )
            findings = result.findings
            meta["jobs"] = jobs
            meta["canaries_run"] = result.canaries_run
        if request.shard is not None:
            findings = fleet_shard.shard_findings(findings, request.shard)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

    environment = _environment(facts)
    meta["duration_s"] = round(time.monotonic() - start, 3)
    meta["probe_duration_s"] = round(facts.duration_s, 3)
    meta["static"] = request.static
    interrupted = result.interrupted if result is not None else None
    if interrupted is not None:
        meta["interrupted"] = True
        meta["exit_code"] = int(
            ExitCode.TERMINATED if isinstance(interrupted, Terminated) else ExitCode.INTERRUPTED
        )
    elif key and not target_error and not (result is not None and result.transient):
        raw = Report("check", environment, findings, __version__, KB_VERSION, meta).to_dict()
        why = cache.store(key, raw)
        if why:
            meta["cache_note"] = why
    findings, notes = apply_suppressions(findings, suppressions)
    if notes:
        meta["suppression_notes"] = notes
    return Report("check", environment, findings, __version__, KB_VERSION, meta)


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def callbacks(self) -> Any:
        from inductor_doctor.engine import Progress

        return Progress()


def _progress(enabled: bool) -> Any:
    """A live progress display on stderr, only for a person at a terminal."""
    if not enabled or not sys.stderr.isatty():
        return _NoProgress()
    from inductor_doctor.render.progress import CanaryProgress

    return CanaryProgress()
