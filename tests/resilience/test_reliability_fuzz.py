"""Fuzzing what users paste and write: `explain --log`, `plan -r` and the suppression config.

No input may crash the doctor: every example must end in exit 0, 1 or 2 (never 3, the doctor's own
failure, which is what an unexpected exception becomes) and print no traceback. The CLI's `main` is
called in process, so that hundreds of examples take seconds.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import List, Tuple
from unittest import mock

import pytest
from fault_canaries.faults import covers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inductor_doctor.cli import main

#: FUZZ_EXAMPLES=2000 for a longer hunt; 150 keeps the suite fast.
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

LOG_PIECES = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.11/site-packages/torch/_inductor/codecache.py", line 2094, in load',
    "torch._inductor.exc.InductorError: AssertionError: Expect the tensor to be 16 bytes aligned",
    "torch._inductor.exc.CppCompileError: C++ compile error",
    "error: conflicting declaration of 'auto tmp0'",
    "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx",
    "fatal error: Python.h: No such file or directory",
    "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
    "RuntimeError: CopyToHostAsync() called on deleted or donated buffer",
    "torch 2.8.0.dev20250415+cu128 triton 3.3.0",
    "\x1b[31mERROR\x1b[0m",
    "\x00\x01\x02",
    "é ü 中文 🙂",
    "",
]
REQ_PIECES = [
    "torch", "triton", "torch_xla", "==", ">=", "<", "~=", "!=", "===", "2.5.1", "3.1.0", "2.8.0.dev20250415",
    "+cu121", "[cuda]", ";", " python_version < '3.12'", " sys_platform == 'linux'", "--index-url https://x/y",
    "--extra-index-url", "-c", "-e", ".", "#", "\\", " ", "@", "${HOME}", "--hash=sha256:abc", "\t",
    "https://download.pytorch.org/whl/cu121/torch-2.5.1%2Bcu121-cp311-cp311-linux_x86_64.whl",
    "git+https://github.com/pytorch/pytorch@main#egg=torch", "(", ")", ",", "*", "\x00", "é",
]
TOML_PIECES = [
    "[[suppress]]", "[tool.inductor-doctor]", "[[tool.inductor-doctor.suppress]]", "[suppress]",
    'id = "block-mask-cpu"', 'id = "pytorch#151589"', 'id = "nope"', "id = 1", "reason = ", '"why"', "''",
    "until = 2027-01-31", 'until = "2027-13-45"', "until = 1979-05-27T07:32:00Z", "until = 07:32:00",
    'device = "cpu"', "device = []", "suppress = []", "suppress = {}", "[1, 2]", "true", '"""', "\n", "=",
    "# comment", "\x00", "é", "inf", "nan", "0x1F",
]


def _call(argv: List[str], stdin: bytes = b"") -> Tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), mock.patch.object(sys, "stdin",
                                                                                            fake_stdin):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _assert_contract(rc: int, err: str) -> None:
    assert rc in (0, 1, 2), err[-2000:]
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]


def joined(pieces: List[str]) -> st.SearchStrategy[str]:
    part = st.one_of(st.sampled_from(pieces), st.text(max_size=12))
    sep = st.sampled_from(["", " ", "\n", "\r\n", "\r", "\n\n"])
    return st.lists(st.tuples(part, sep), max_size=40).map(lambda xs: "".join(a + b for a, b in xs))


@covers("fuzzed-input")
@FUZZ
@given(data=st.one_of(st.binary(max_size=3000),
                      joined(LOG_PIECES).map(lambda s: s.encode("utf-8", "replace")),
                      joined(LOG_PIECES).map(lambda s: s.encode("utf-16"))),
       fmt=st.sampled_from(["text", "json"]))
@pytest.mark.heavy
def test_fuzz_explain_log(tmp_path, data, fmt):
    log = tmp_path / "log.txt"
    log.write_bytes(data)
    rc, out, err = _call(["explain", "--log", str(log), "--format", fmt])
    _assert_contract(rc, err)
    if fmt == "json" and rc in (0, 1):
        import json

        json.loads(out)
    rc, _, err = _call(["explain", "--log", "-", "--format", fmt], stdin=data)
    _assert_contract(rc, err)


@covers("fuzzed-input")
@FUZZ
@given(text=joined(REQ_PIECES), as_pyproject=st.booleans(),
       specs=st.lists(joined(REQ_PIECES[:20]), max_size=3))
def test_fuzz_plan_requirements(tmp_path, text, as_pyproject, specs):
    if as_pyproject:
        path = tmp_path / "pyproject.toml"
        lines = ",\n".join(repr(line) for line in text.splitlines())
        path.write_text(f"[project]\nname = 'x'\ndependencies = [\n{lines}\n]\n", encoding="utf-8")
    else:
        path = tmp_path / "requirements.txt"
        path.write_text(text, encoding="utf-8", errors="replace")
    rc, _, err = _call(["plan", "-r", str(path), *[s for s in specs if s.strip() and not s.startswith("-")]])
    _assert_contract(rc, err)


def _minimal_facts(python=None, live=False, timeout_s=60.0, use_cache=None, live_probe=None, **_: object):
    from inductor_doctor.core.facts import Facts, PythonInfo

    return Facts(python=PythonInfo(executable=sys.executable, version="3.11.7", platform="linux"))


@covers("fuzzed-input", "config-malformed")
@FUZZ
@given(text=joined(TOML_PIECES), name=st.sampled_from(["inductor-doctor.toml", "pyproject.toml"]))
def test_fuzz_config(tmp_path, text, name):
    """The whole `check --config` path, with the probe replaced by minimal facts to keep it fast."""
    config = tmp_path / name
    config.write_text(text, encoding="utf-8", errors="replace")
    with mock.patch("inductor_doctor.probe.gather", _minimal_facts):
        rc, _, err = _call(["check", "--config", str(config), "--static", "--no-cache", "--only",
                            "block-mask-cpu,view-dtype-align"])
    _assert_contract(rc, err)


@covers("endless-input")
def test_endless_log_is_refused_in_bounded_time():
    import subprocess

    try:
        proc = subprocess.run([sys.executable, "-m", "inductor_doctor", "explain", "--log", "/dev/zero"],
                              capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("explain --log /dev/zero still running after 20 s")
    assert proc.returncode == 2


@covers("endless-input")
def test_endless_requirements_include_is_refused(tmp_path):
    import resource
    import subprocess

    req = tmp_path / "requirements.txt"
    req.write_text("-r /dev/zero\n")

    def cap_memory() -> None:  # so that the bug costs a MemoryError, not the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    cmd = [sys.executable, "-m", "inductor_doctor", "plan", "-r", str(req)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, preexec_fn=cap_memory)
    assert proc.returncode == 2, proc.stderr[-500:]
