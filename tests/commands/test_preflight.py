"""`inductor_doctor.preflight(device)` from a real Python process, as a library calls it.

The library's process imports torch; preflight must not (nor click, nor rich), must say "not
usable" with the reason in a real broken state (no compiler on PATH), "usable" in the normal one,
and answer a second call from its record, from a fresh process too, without starting a process or
loading the probe, the checks or any third-party module (what keeps it within 50 ms is measured by
bench/bench_speed.py, never timed here). A fixed problem is never replayed: the record is keyed by
what the answer depends on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LIBRARY = r"""
import json, sys, time
import torch  # a library that calls preflight has torch imported already
t0 = time.perf_counter()
import inductor_doctor
verdict = inductor_doctor.preflight("cpu", timeout=600)
first_s = time.perf_counter() - t0
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("click", "rich", "typer"))
print(json.dumps({"usable": bool(verdict), "reason": verdict.reason, "cached": verdict.cached,
                  "workaround": verdict.workaround, "findings": [f["id"] for f in verdict.findings],
                  "seconds": first_s, "loaded": loaded}))
"""

SECOND = r"""
import json, subprocess, sys
started = []
_init = subprocess.Popen.__init__
def _record(self, args, *rest, **kw):
    started.append(args)
    return _init(self, args, *rest, **kw)
subprocess.Popen.__init__ = _record
before = set(sys.modules)
import inductor_doctor
verdict = inductor_doctor.preflight("cpu")
# The record and its fingerprint (check/record.py) are all an answer from the record may load of `check/`.
loaded = sorted(m for m in set(sys.modules) - before if m.split(".")[0] != "inductor_doctor"
                or m.startswith(("inductor_doctor.probe", "inductor_doctor.check", "inductor_doctor.kb."))
                and m not in ("inductor_doctor.check", "inductor_doctor.check.record"))
print(json.dumps({"usable": bool(verdict), "cached": verdict.cached, "started": started,
                  "loaded": loaded}))
"""


def _run(code: str, tmp_path: Path, env=None) -> dict:
    full = dict(os.environ)
    full["INDUCTOR_DOCTOR_CACHE_DIR"] = str(tmp_path / "cache")
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=full)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _torch_or_skip() -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed for this interpreter")


@pytest.mark.heavy
def test_usable_here_and_the_second_call_is_a_record(tmp_path):
    _torch_or_skip()
    first = _run(LIBRARY, tmp_path)
    assert first["usable"] is True, first["reason"]
    assert first["reason"].startswith("torch.compile should work on cpu")
    assert first["loaded"] == [], "preflight loaded CLI machinery into the library's process"
    seconds = [_run(SECOND, tmp_path) for _ in range(3)]
    assert all(s["usable"] and s["cached"] for s in seconds)
    assert all(s["started"] == [] for s in seconds), "a record's answer started a process"
    heavy = [m for m in seconds[0]["loaded"] if m.split(".")[0] in ("inductor_doctor", "elftools", "psutil",
                                                                    "packaging", "click", "rich")]
    assert heavy == [], f"a record's answer loaded {heavy}"


@pytest.mark.heavy
def test_no_compiler_is_not_usable_with_the_reason(tmp_path):
    _torch_or_skip()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("python3", "python"):
        (bindir / name).symlink_to(os.path.realpath(sys.executable))
    verdict = _run(LIBRARY, tmp_path, env={"PATH": str(bindir)})
    assert verdict["usable"] is False
    assert "cxx-compiler-missing" in verdict["findings"]
    assert verdict["reason"].startswith("torch.compile will fail on cpu: cxx-compiler-missing is affected")
    assert verdict["workaround"]
    # With the compiler back, the record of the broken state is not replayed.
    back = _run(SECOND, tmp_path)
    assert back["usable"] is True and back["cached"] is False


def test_a_device_it_does_not_know_is_a_value_error():
    import inductor_doctor

    with pytest.raises(ValueError, match="unknown device"):
        inductor_doctor.preflight("tpu:9")


def test_a_missing_torch_is_a_verdict_not_an_exception(tmp_path):
    """An interpreter without torch: not usable, the reason says so; nothing raised."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    code = (f"import json, inductor_doctor; v = inductor_doctor.preflight('cpu', python={python!r}); "
            "print(json.dumps({'usable': v.usable, 'reason': v.reason}))")
    verdict = _run(code, tmp_path)
    assert verdict["usable"] is False and "torch-missing" in verdict["reason"]


@pytest.mark.heavy
def test_the_documented_pattern_runs_eagerly_and_says_why(tmp_path):
    """docs/preflight.md's example, as it is written, in a broken state: the result, eagerly, and
    the reason and the workaround logged."""
    import re

    _torch_or_skip()
    page = (Path(__file__).resolve().parents[2] / "docs" / "preflight.md").read_text()
    example = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "maybe_compile" in b)
    script = tmp_path / "example.py"
    script.write_text(example)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    env = {**os.environ, "PATH": str(bindir), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tensor([1.8415, 1.8415, 1.8415])" in proc.stdout
    assert "running step eagerly: torch.compile will fail on cpu: cxx-compiler-missing" in proc.stderr
    assert "to compile it: " in proc.stderr


ABSENT = r"""
import json, sys
import torch  # the library's own process: torch is imported already
import inductor_doctor
out = {}
for device in sys.argv[1:]:
    v = inductor_doctor.preflight(device, timeout=600)
    out[device] = {"usable": bool(v), "reason": v.reason, "checked": v.checked}
print(json.dumps(out))
"""


def test_a_device_that_is_not_here_is_never_usable(tmp_path):
    """With a CPU-only torch and no torch_xla (this machine), `cuda`, `cuda:3` and `xla` are not
    there: each is not usable, and the reason says what is missing (the CPU's usable answer is
    test_usable_here_and_the_second_call_is_a_record's)."""
    _torch_or_skip()
    import importlib.util

    code = ABSENT.replace("sys.argv[1:]", "['cuda', 'cuda:3', 'xla']")
    got = _run(code, tmp_path)
    torch_cuda = subprocess.run([sys.executable, "-c", "import torch; print(torch.version.cuda)"],
                                capture_output=True, text=True).stdout.strip()
    if torch_cuda == "None":
        for device, name in (("cuda", "cuda:0"), ("cuda:3", "cuda:3")):
            assert got[device]["usable"] is False, got[device]
            assert got[device]["reason"].startswith(f"torch.compile cannot run on {name}: torch ")
            assert "is CPU-only" in got[device]["reason"]
    if importlib.util.find_spec("torch_xla") is None:
        assert got["xla"]["usable"] is False
        assert got["xla"]["reason"] == "torch.compile cannot run on xla: torch_xla is not installed"
    # The record of an absent device says the same, and no false "usable" is kept either.
    again = _run(code, tmp_path)
    assert {d: v["usable"] for d, v in again.items()} == {d: v["usable"] for d, v in got.items()}


def _gpu_environment(**cuda):
    base = {"driver_version": "580.1", "driver_gpus": [{"index": 0}], "gpus": [], "visible_devices": None,
            "torch_device_count": None, "visible_count": None}
    return {"torch": {"version": "2.11.0+cu130", "cuda": "13.0"}, "cuda": {**base, **cuda}, "xla": None}


def test_absent_names_out_of_range_hidden_and_missing_driver():
    """What the GPU host's states give the probe (tests/gpu_states.sh runs them for real): the
    reason preflight gives for each way a GPU can be missing."""
    from inductor_doctor.commands.preflight import absent, decide

    one_gpu = _gpu_environment(gpus=[{"index": 0}], visible_count=1)
    assert absent("cuda:0", one_gpu) is None
    three = _gpu_environment(visible_count=1)  # the filter kept cuda:3 only, and there is none
    assert absent("cuda:3", three) == ("no such device: cuda:3 is out of range "
                                       "(torch sees 1 GPU(s): cuda:0 only)")
    hidden = _gpu_environment(visible_devices="", visible_count=0)
    assert absent("cuda:0", hidden) == ("no such device: the driver lists 1 GPU(s) and "
                                        "CUDA_VISIBLE_DEVICES='' hides them")
    no_driver = _gpu_environment(driver_version=None, driver_gpus=[])
    assert absent("cuda:0", no_driver) == "there is no NVIDIA GPU or driver here"
    # A device that is there, but on which nothing was checked, is not usable either.
    only_na = [{"id": "x", "device": "cuda:0", "status": "not-applicable", "severity": "error",
                "reason": "triton is not installed"}]
    verdict = decide("cuda:0", only_na)
    assert not verdict and "nothing on it was checked (triton is not installed)" in verdict.reason
