"""`inductor_doctor.preflight(device)`: will `torch.compile` work here? One typed answer.

Libraries decide whether to compile by hand and get it wrong both ways: an import that succeeds
is no compile that will (unsloth#7704), and a gate drawn too broadly breaks setups that work
(musubi-tuner#999). This asks the doctor's own checks, for one device only: the static rules and
the canaries (in subprocesses, with a timeout), so a false "usable" is never the answer. Anything
that cannot be confirmed (a canary that timed out or crashed otherwise) is "not usable", with the
reason; a warning-level finding (autotuning slower, say) is logged, not gated on.

A second call answers from a record kept under the doctor's cache directory (`check/record.py`),
keyed by what the answer depends on and can be read without running anything: the doctor and its
knowledge base, the interpreter, the torch / Triton / torch_xla installs, the C++ compiler Inductor
would pick and its include directories, the NVIDIA driver, and the relevant environment variables.
Change any and the checks run again; a fixed problem is never replayed from the record.

Importing this costs nothing in a process that already imports torch: no click, no rich; the
check machinery loads only when a check has to run.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from inductor_doctor.check import record
from inductor_doctor.core.document import Document

#: Findings at these statuses, of error severity, make a device unusable.
BLOCKING = ("affected", "likely", "inconclusive")


@dataclass(frozen=True)
class Verdict(Document):
    """The answer: `usable`, and why. `bool(verdict)` is `usable`."""

    command: ClassVar[str] = "preflight"
    ENVELOPE: ClassVar[Tuple[str, ...]] = ("schema",)  # a library's answer, and its record

    usable: bool
    device: str
    reason: str  # one sentence a library can log as it is
    findings: Tuple[Dict[str, Any], ...] = ()  # the deciding ones, as `check --format json` has them
    workaround: Optional[str] = None  # the first thing to try, a command where there is one
    warnings: Tuple[str, ...] = ()  # warning-level findings: worth logging, not gated on
    cached: bool = False
    duration_s: float = 0.0
    checked: int = 0  # how many checks the answer rests on
    extra: Dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.usable

    def body(self) -> Dict[str, Any]:
        return {
            "usable": self.usable,
            "device": self.device,
            "reason": self.reason,
            "findings": list(self.findings),
            "workaround": self.workaround,
            "warnings": list(self.warnings),
            "cached": self.cached,
            "duration_s": round(self.duration_s, 3),
            "checked": self.checked,
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any], cached: bool = False, duration_s: float = 0.0) -> Verdict:
        return cls(bool(d["usable"]), d["device"], d["reason"], tuple(d.get("findings") or ()),
                   d.get("workaround"), tuple(d.get("warnings") or ()), cached, duration_s,
                   int(d.get("checked") or 0))


def preflight(
    device: str = "cuda:0", *, timeout: Optional[float] = None, python: Optional[str] = None
) -> Verdict:
    """Whether `torch.compile` will work on `device` ("cpu", "cuda", "cuda:N", "xla").

    `timeout` bounds each canary (seconds; the issue's own default otherwise); `python` is the
    interpreter to judge (default: this one). Never raises for what it finds: a broken torch, no
    compiler or no GPU is a verdict. A device string it does not know is a ValueError.
    """
    start = time.perf_counter()
    device = normalize_device(device)
    interpreter = python or sys.executable
    key = record.fingerprint(device, interpreter)
    kept = record.read(key)
    if kept is not None:
        return Verdict.from_dict(kept, cached=True, duration_s=time.perf_counter() - start)
    try:
        verdict = _check(device, python, timeout)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the doctor's own failure must not break the caller, nor say "usable"
        reason = f"inductor-doctor could not check {device}: {type(exc).__name__}: {exc}"
        return Verdict(False, device, reason, duration_s=time.perf_counter() - start)
    from inductor_doctor.core.paths import cache_refusal

    refusal = cache_refusal()  # the cache directory was not ours: checked afresh, and say so
    warnings = verdict.warnings + ((refusal,) if refusal else ())
    verdict = Verdict(verdict.usable, verdict.device, verdict.reason, verdict.findings, verdict.workaround,
                      warnings, False, time.perf_counter() - start, verdict.checked)
    if _cacheable(verdict):
        record.write(key, verdict.to_dict())
    return verdict


def normalize_device(device: str) -> str:
    d = str(device).strip().lower()
    if d == "cuda":
        return "cuda:0"
    if d in ("cpu", "xla") or (d.startswith("cuda:") and d[5:].isdigit()):
        return d
    raise ValueError(f"unknown device {device!r}: use 'cpu', 'cuda', 'cuda:N' or 'xla'")


# --- the checks ---------------------------------------------------------------------------------


def _check(device: str, python: Optional[str], timeout: Optional[float]) -> Verdict:
    from inductor_doctor.check.devices import DeviceFilter
    from inductor_doctor.check.flow import CheckRequest, run_check

    kinds = ["toolchain", device] + (["cuda"] if device.startswith("cuda") else [])
    report = run_check(CheckRequest(python=python, timeout_s=timeout, devices=DeviceFilter.only(*kinds)))
    findings = [f.to_dict() for f in report.findings]
    return decide(device, findings, absent(device, report.environment))


def absent(device: str, environment: Dict[str, Any]) -> Optional[str]:
    """Why `device` is not there for torch, from the probe's facts; None when it is.

    A device that is absent, hidden or out of range has nothing to compile on: its rules answer
    `not-applicable` ("no NVIDIA GPU here"), which is no evidence that a compile would work, so
    preflight must never read it as "nothing in the way".
    """
    if device == "cpu":
        return None
    torch = environment.get("torch") or {}
    if device == "xla":
        xla = environment.get("xla") or {}
        return None if xla.get("version") else "torch_xla is not installed"
    if not torch.get("version"):
        return "torch is not installed"
    if not torch.get("cuda") and not torch.get("hip"):
        return f"torch {torch['version']} is CPU-only (a build without CUDA)"
    cuda = environment.get("cuda") or {}
    if any(f"cuda:{g.get('index')}" == device for g in cuda.get("gpus") or ()):
        return None
    driver = cuda.get("driver_gpus") or []
    if not driver and not cuda.get("driver_version"):
        return "there is no NVIDIA GPU or driver here"
    count = cuda.get("torch_device_count")
    if count is None:
        count = cuda.get("visible_count")
    if count is None:
        count = len(driver)
    if count == 0:
        hidden = cuda.get("visible_devices")
        why = f"CUDA_VISIBLE_DEVICES={hidden!r} hides them" if hidden is not None else "torch sees none"
        return f"no such device: the driver lists {len(driver)} GPU(s) and {why}"
    last = f"cuda:0 to cuda:{count - 1}" if count > 1 else "cuda:0 only"
    return f"no such device: {device} is out of range (torch sees {count} GPU(s): {last})"


def decide(device: str, findings: List[Dict[str, Any]], missing: Optional[str] = None) -> Verdict:
    """Usable only when the device is there, something on it was checked, and no error-level
    finding is affected, likely, or could not be decided.

    `missing` is why the device is absent (`absent()`). A device that is there but on which every
    finding is `not-applicable` (or none was made) was not checked: that is no "usable" either.
    """
    if missing is not None:
        reason = f"torch.compile cannot run on {device}: {missing}"
        return Verdict(False, device, reason, checked=len(findings))
    own = [f for f in findings if _on(f, device) and f["severity"] == "error"]
    if device != "cpu" and not any(f["status"] != "not-applicable" for f in own):
        what = "; ".join(sorted({f["reason"] for f in own})[:2]) or "no check concerns it"
        reason = f"torch.compile cannot be confirmed on {device}: nothing on it was checked ({what})"
        return Verdict(False, device, reason, checked=len(findings))
    blocking = [f for f in findings if f["severity"] == "error" and f["status"] in BLOCKING
                and not f.get("suppressed")]
    blocking.sort(key=lambda f: BLOCKING.index(f["status"]))
    warnings = tuple(f"{f['id']} ({f['status']}): {f['reason']}" for f in findings
                     if f["severity"] != "error" and f["status"] in ("affected", "likely"))
    if not blocking:
        reason = (f"torch.compile should work on {device}: {len(findings)} checks of known issues found "
                  "nothing in the way")
        return Verdict(True, device, reason, warnings=warnings, checked=len(findings))
    first = blocking[0]
    workaround = _first_workaround(first)
    verb = "cannot be confirmed" if first["status"] == "inconclusive" else "will fail"
    others = f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else ""
    reason = f"torch.compile {verb} on {device}: {first['id']} is {first['status']}{others}: "
    reason += first["reason"]
    if workaround:
        reason += f"; try: {workaround}"
    return Verdict(False, device, reason, tuple(blocking), workaround, warnings, checked=len(findings))


def _on(finding: Dict[str, Any], device: str) -> bool:
    """A finding about `device` itself (the bare kind `cuda` is a GPU that was not found)."""
    where = finding["device"]
    return where == device or (device.startswith("cuda:") and where == "cuda")


def _first_workaround(finding: Dict[str, Any]) -> Optional[str]:
    for w in finding.get("workarounds") or ():
        if w.get("command"):
            return str(w["command"])
    for w in finding.get("workarounds") or ():
        return str(w.get("text"))
    return None


def _cacheable(verdict: Verdict) -> bool:
    """A verdict that rests on a timeout or a crash of another cause is asked again next time."""
    return not any(f["status"] == "inconclusive" for f in verdict.findings)
