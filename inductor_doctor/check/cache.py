"""What `check` remembers: canary outcomes, keyed by everything a canary depends on; and the last
report of each interpreter, for `explain` and `fix`.

Only what is expensive is kept. The probe and the static rules run every time (a fraction of a
second), so a verdict they give always reflects the machine as it is now: install a header, drop a
compiler onto PATH, change TMPDIR, and the next plain `check` says so. A canary outcome is reused
only when its key is unchanged, and the key holds what the canary can depend on: the canary script
and the harness (their bytes), the interpreter (path, size, mtime), the device, the canary's own
environment and timeout, the files that make up the installed torch and Triton, and the probe's
facts with the volatile parts taken out (durations, notes, the raw live answer). Those facts include
the relevant environment variables (`envvars.py`), the compilers and their answers, the cache
directories, the GPUs and the driver: a fix that changes any of them is a new key.

An outcome that says the canary could not run (no scratch space, a timeout, an interrupt, no result
reported) is never stored: re-running it is the honest answer.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from inductor_doctor.core.declare import volatile_names
from inductor_doctor.core.facts import Facts
from inductor_doctor.core.files import file_key, read_own_text, write_text_atomic
from inductor_doctor.core.interpreter import canonical_interpreter
from inductor_doctor.core.paths import cache_dir, private_dir
from inductor_doctor.core.version import __version__

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.check.runner import CanaryJob, CanaryRun

#: Bump when what is stored, or how the key is made, changes.
VERSION = 3  # 3: the harness reports what a canary exercised (its proof)
#: Fact fields that change from run to run without the environment changing (durations, notes, the
#: raw live answer, what /dev/shm and a GPU have free now, what a compile cache holds): those the
#: facts declare out of a canary's key (`key=False` in `core/facts.py`).
VOLATILE = volatile_names(Facts)
#: What a stored run keeps of the canary's output: enough to classify it again.
KEEP_BYTES = 16 * 1024


def stable_facts(value: Any) -> Any:
    """The facts (as `to_dict()` gives them) without the parts that vary with nothing."""
    if isinstance(value, dict):
        return {k: stable_facts(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable_facts(v) for v in value]
    return value


def _digest(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _package_files(facts: Facts) -> List[Any]:
    """Files whose change (a reinstall, a patched build) changes what a canary runs."""
    paths: List[Optional[str]] = []
    if facts.torch is not None:
        paths += [os.path.join(facts.torch.path, "__init__.py") if facts.torch.path else None,
                  facts.torch.libtorch_cpu]
    if facts.triton is not None and facts.triton.path:
        paths.append(os.path.join(facts.triton.path, "__init__.py"))
    if facts.xla is not None and facts.xla.path:
        paths.append(os.path.join(facts.xla.path, "__init__.py"))
    return [file_key(p) for p in paths]


class CanaryStore:
    """Canary outcomes on disk, under the doctor's cache directory; `enabled=False` keeps nothing.
    `reuse=False` (`check --no-cache`) answers nothing from disk but still keeps what it ran: the
    fresh outcome is the truest there is, and the next plain `check` should not pay for it again."""

    def __init__(self, enabled: bool = True, facts: Optional[Facts] = None, reuse: bool = True) -> None:
        root = cache_dir()
        self.root = root / "canaries" if enabled and root is not None else None
        self.reuse = reuse
        self._facts_blob = json.dumps(stable_facts(facts.to_dict()), sort_keys=True, default=str) if facts \
            else ""
        self._files = _package_files(facts) if facts is not None else []
        self.note: Optional[str] = None  # why nothing could be stored, if that happened

    def key(self, job: CanaryJob, harness: Path) -> Optional[str]:
        if self.root is None:
            return None
        script, wrapper = _digest(job.script), _digest(harness)
        if script is None or wrapper is None:
            return None
        inputs = [VERSION, __version__, script, wrapper, file_key(job.python),
                  canonical_interpreter(job.python), job.device, sorted(job.env.items()), list(job.needs),
                  job.timeout_s, self._files,
                  hashlib.sha256(self._facts_blob.encode()).hexdigest()]
        blob = json.dumps(inputs, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:40]

    def load(self, key: Optional[str]) -> Optional[Dict[str, Any]]:
        """A stored run, or None: a missing, unreadable, truncated or foreign file is a miss."""
        if key is None or self.root is None or not self.reuse:
            return None
        text = read_own_text(self.root / f"{key}.json")
        try:
            data = json.loads(text) if text is not None else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("run"), dict):
            return None
        return data["run"]

    def save(self, key: Optional[str], run: CanaryRun) -> None:
        if key is None or self.root is None or not cacheable(run):
            return
        record = {
            "key": key,
            "run": {
                "returncode": run.returncode,
                "result": run.result,
                "stdout": run.stdout[-KEEP_BYTES:],
                "stderr": run.stderr[-KEEP_BYTES:],
                "duration_s": round(run.duration_s, 3),
            },
        }
        try:
            private_dir(self.root)
            write_text_atomic(self.root / f"{key}.json", json.dumps(record), private=True, durable=False)
        except OSError as exc:
            self.note = f"canary outcomes not kept ({exc.strerror or exc}: {self.root})"


def cacheable(run: CanaryRun) -> bool:
    """Only a canary that ran to the end and reported: never one that could not run."""
    return run.error is None and not run.timed_out and not run.interrupted and run.result is not None


# --- the last report of each interpreter ----------------------------------------------------------


def _last_path(python: str) -> Optional[Path]:
    """Where the last report of this interpreter is kept: under its canonical path, so `python` and
    `python3` of one install share it, and a venv never shares its base interpreter's
    (`os.path.realpath` would follow the venv's link to the base)."""
    root = cache_dir()
    if root is None:
        return None
    name = hashlib.sha256(canonical_interpreter(python).encode()).hexdigest()[:24]
    return root / "last" / f"{name}.json"


def save_last(python: str, report: Dict[str, Any]) -> Optional[str]:
    """Keep the report of this check; returns why it could not, if it could not."""
    path = _last_path(python)
    if path is None:
        from inductor_doctor.core.paths import cache_refusal

        refusal = cache_refusal()
        if refusal:
            return refusal
        return "report not kept (no home directory: set HOME or INDUCTOR_DOCTOR_CACHE_DIR)"
    import datetime

    when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    report = {**report, "meta": {**(report.get("meta") or {}), "finished_at": when}}
    try:
        private_dir(path.parent)
        write_text_atomic(path, json.dumps({"python": canonical_interpreter(python), "report": report}),
                          private=True, durable=False)
    except OSError as exc:
        return f"report not kept ({exc.strerror or exc}: {path.parent})"
    return None


def last_report(python: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The last check of this interpreter (default: this one), or None."""
    import sys

    path = _last_path(python or sys.executable)
    if path is None:
        return None
    text = read_own_text(path)
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    report = data.get("report") if isinstance(data, dict) else None
    return report if isinstance(report, dict) and isinstance(report.get("results"), list) else None


def settings_differ(report: Dict[str, Any], environ: Optional[Dict[str, str]] = None) -> List[str]:
    """The compile-stack settings (the environment variables `envvars` collects) that differ
    between the check on record and this process: `CXX: clang++-16 then, not set now`. A command
    that reads a check (explain, fix) says so, since its verdicts belong to those settings."""
    from inductor_doctor.core.envvars import relevant_env

    then = (report.get("environment") or {}).get("env") or {}
    now = relevant_env(environ)
    out = []
    for name in sorted(set(then) | set(now)):
        before, after = then.get(name), now.get(name)
        if before == after:
            continue
        if len(str(before or "")) + len(str(after or "")) > 80:
            now_is = "changed" if before and after else "not set now" if before else "set now"
            out.append(f"{name} {now_is}")
        else:
            out.append(f"{name}: {_shown(before)} then, {_shown(after)} now")
    return out


def _shown(value: Optional[str]) -> str:
    return "not set" if value is None else repr(value) if value == "" or " " in value else value


def checked_when(report: Dict[str, Any]) -> Optional[str]:
    """When the check on record finished, as a reader says it: `2026-11-25 15:30 UTC`."""
    when = (report.get("meta") or {}).get("finished_at")
    if not isinstance(when, str) or len(when) < 16:
        return None
    return when[:10] + " " + when[11:16] + (" UTC" if when.endswith(("+00:00", "Z")) else "")


def last_findings(python: Optional[str] = None) -> List[Dict[str, Any]]:
    """The findings of the last check of this interpreter still on record; [] when there is none."""
    report = last_report(python)
    return list(report["results"]) if report else []
