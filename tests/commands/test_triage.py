"""`explain --log`: reading any input, matching in linear time, ranking, the check offer, exit codes.

Unit tests use stand-in issues so they test triage itself; the CLI tests use the real knowledge
base with texts from the corpus.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

from inductor_doctor.core.model import DeviceKind, KnownIssue, Severity, Signature, UsageError, Workaround
from inductor_doctor.kb import registry
from inductor_doctor.schemas import validate
from inductor_doctor.triage.engine import (
    EXACT,
    PARTIAL,
    VERSION_ONLY,
    LogInput,
    read_log,
    triage_stream,
    triage_text,
)
from inductor_doctor.triage.scan import MAX_COUNT, normalize, required_literals
from inductor_doctor.triage.versions import versions_mentioned

CORPUS = Path(__file__).resolve().parents[1] / "data" / "triage"


def _issue(id_: str, *sigs: Signature, affected=None) -> KnownIssue:
    return KnownIssue(
        id=id_,
        title=f"stand-in {id_}",
        severity=Severity.ERROR,
        devices=(DeviceKind.CUDA,),
        upstream=(),
        summary="s",
        affected=affected or {},
        signatures=sigs,
        workarounds=(Workaround("do this", "export X=1", "env"),),
    )


ISSUES = [
    _issue(
        "constexpr",
        Signature(r"NameError: name '[su]\d+' is not defined"),
        Signature(r"'constants': \{[^}]*: [su]\d+[,}]", "partial"),
        affected={"torch": ">=2.2,<2.6"},
    ),
    _issue(
        "align",
        Signature(r"Expect the tensor to be \d+ bytes aligned"),
        Signature(r"assert_alignment\(", "partial"),
        affected={"torch": ">=2.8.0.dev20250408,<2.8.0.dev20250423"},
    ),
    _issue("cpp", Signature(r"(?:CppCompileError|InductorError)[\s\S]{0,300}?omp\.h' file not found")),
    _issue("generic", Signature("CppCompileError", "partial")),
    _issue("xla", Signature("t1=4"), affected={"torch_xla": "<2.6"}),
]


def run(text: str, issues=ISSUES):
    data, stripped = normalize(text.encode("utf-8"))
    return triage_text(LogInput("t", data, len(data), ansi_stripped=stripped), issues)


def ids(result, confidence=None):
    return [m.issue.id for m in result.matches if confidence is None or m.confidence == confidence]


# --- matching ----------------------------------------------------------------------------------


def test_wording_drift_s0_s2_u0():
    for sym in ("s0", "s2", "s17", "u0"):
        assert ids(run(f"NameError: name '{sym}' is not defined\n")) == ["constexpr"]


def test_alignment_with_and_without_error_in_op():
    old = "Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=2\n"
    new = "AssertionError:\nError in op: torch.ops.aten.view.dtype\n" + old.replace("=2", "=4")
    assert ids(run(old)) == ids(run(new)) == ["align"]


def test_multi_line_signature_across_wrapping_exceptions():
    log = (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "InductorError: CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/x.cpp -fopenmp\n\n"
        "Output:\n/tmp/x.cpp:2:10: fatal error: 'omp.h' file not found\n"
    )
    result = run(log)
    assert ids(result) == ["cpp"], "the exact match hides the shared partial one"
    assert result.matches[0].evidence[0].line == 2


def test_partial_only_is_reported_as_weak():
    result = run("torch._inductor.exc.CppCompileError: C++ compile error\n")
    assert ids(result, PARTIAL) == ["generic"]


def test_versions_in_the_log_confirm_one_match_and_demote_the_other():
    """An exact match outside its affected range is the same words from another cause: at most
    partial, and dropped beside a match the versions confirm; alone, it says why it is partial."""
    log = (
        "PyTorch version: 2.5.1+cu124\n"
        "Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=2\n"
        "NameError: name 's0' is not defined\n"
        "'constants': {2: s0, 3: 256}\n"
    )
    result = run(log)
    assert ids(result) == ["constexpr"]
    first = result.matches[0]
    assert first.version_in_range is True and "2.5.1" in first.note
    assert result.versions == {"torch": ["2.5.1+cu124"], "cuda": ["12.4"]}

    alone = run("PyTorch version: 2.5.1+cu124\n" + log.splitlines()[1] + "\n")
    (match,) = alone.matches
    assert match.confidence == PARTIAL and match.version_in_range is False
    assert "outside the affected range" in match.because[0] and "line 2 has its error" in match.because[0]


def test_version_only_hints_when_no_signature_matches():
    result = run("[pip3] torch==2.5.1\n[pip3] torch_xla==2.5.1\nRuntimeError: something else\n")
    assert result.matched == []
    assert set(ids(result, VERSION_ONLY)) == {"constexpr", "xla"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("PyTorch version: 2.5.1+cu124", {"torch": ["2.5.1+cu124"], "cuda": ["12.4"]}),
        ("CUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A", {"cuda": ["12.1"]}),
        ("torch              2.6.0\npytorch-triton-rocm 3.1.0", {"torch": ["2.6.0"], "triton": ["3.1.0"]}),
        ("Nvidia driver version: 535.104.05", {"driver": ["535.104.05"]}),
        ("[pip3] torch==2.6.0\n[pip3] triton==3.2.0", {"torch": ["2.6.0"], "triton": ["3.2.0"]}),
        ("[conda] pytorch 2.4.1 py3.11_cuda12.4_cudnn9.1.0_0 pytorch", {"torch": ["2.4.1"]}),
        ("torch_xla version: 2.5.1", {"torch-xla": ["2.5.1"]}),
        ("site-packages/torch-2.8.0.dev20250410.dist-info", {"torch": ["2.8.0.dev20250410"]}),
        ("# torch version: 2.3.0a0+gitcc46829", {"torch": ["2.3.0a0+gitcc46829"]}),
        ("libtorch-2.5.1 and torchvision 0.20.1 and torch.compile 2.0", {}),
    ],
)
def test_versions_mentioned(text, expected):
    assert versions_mentioned(text.lower().encode()) == expected


def test_mangled_and_demangled_symbols():
    issues = [
        _issue(
            "abi",
            Signature(r"undefined symbol:?\s*_ZNK2at10TensorBase14const_data_ptrI\w*?TnNSt9enable_if\w*"),
            Signature(
                r"undefined (?:symbol|reference to)\W*[\w:<>,* ]*?"
                r"at::TensorBase::const_data_ptr<[\w:, ]+>\(\) const"
            ),
        )
    ]
    mangled = (
        "ImportError: x.so: undefined symbol: _ZNK2at10TensorBase14const_data_ptrIlTnNSt9enable_if"
        "IXntsr3stdE10is_const_vIT_EEiE4typeELi0EEEPKS3_v\n"
    )
    demangled = (
        "ld.lld: error: undefined symbol: long const* at::TensorBase::const_data_ptr<long, 0>() const\n"
    )
    gnu_ld = (
        "/usr/bin/ld: ext.o: undefined reference to "
        "`long const* at::TensorBase::const_data_ptr<long, 0>() const'\n"
    )
    for text in (mangled, demangled, gnu_ld):
        assert ids(run(text, issues)) == ["abi"], text


def test_ansi_crlf_and_progress_bars_are_normalized():
    log = "\x1b[1;31mNameError: name 's2' is not defined\x1b[0m\r\n 10%|█\r 50%|████\r100%|████████\r\n"
    result = run(log)
    assert ids(result) == ["constexpr"]
    assert result.matches[0].evidence[0].text == ["NameError: name 's2' is not defined"]
    assert result.log.ansi_stripped


def test_huge_single_line_costs_no_more_than_a_short_log():
    line = "x" * 5_000_000 + " NameError: name 's0' is not defined " + "y" * 5_000_000
    start = time.perf_counter()
    result = run(line + "\n")
    assert time.perf_counter() - start < 2.0
    evidence = result.matches[0].evidence[0]
    assert evidence.line == 1 and len(evidence.text[0]) < 300 and "NameError" in evidence.text[0]


def test_a_literal_on_every_line_stays_linear():
    log = "Expect the tensor to be aligned, it said\n" * 200_000  # the literal, never the regex
    start = time.perf_counter()
    assert run(log).matched == []
    assert time.perf_counter() - start < 3.0


def test_occurrences_are_counted_and_evidence_capped():
    result = run("NameError: name 's0' is not defined\n" * (MAX_COUNT + 10))
    m = result.matches[0]
    assert m.occurrences == MAX_COUNT and len(m.evidence) <= 5


@pytest.mark.parametrize(
    "pattern, literals",
    [
        (r"NameError: name '[su]\d+' is not defined", ["nameerror: name 's", "nameerror: name 'u"]),
        (r"\bg(?:cc|\+\+)-[4-8]\.", ["g++-4.", "g++-5.", "g++-6.", "g++-7.", "g++-8.", "gcc-4.", "gcc-5.",
                                   "gcc-6.", "gcc-7.", "gcc-8."]),
        (r"deleted or donated buffer|t1=4", ["deleted or donated buffer", "t1=4"]),
        (r"(?:CppCompileError|InductorError)[\s\S]{0,300}?omp\.h' file not found", ["omp.h' file not found"]),
        (r"\bs\d+\b", None),
        (r"(?x) foo \s+ bar", ["foo"]),
        (r"x?y?", None),
    ],
)
def test_required_literals(pattern, literals):
    assert required_literals(pattern, re.IGNORECASE) == literals


def test_the_prefilter_never_loses_a_match_of_the_real_signatures():
    """Every registered signature's literals really are in every corpus text it matches."""
    texts = [p.read_text(encoding="utf-8") for p in CORPUS.glob("*.log")]
    for issue in registry():
        for sig in issue.signatures:
            lits = required_literals(sig.pattern, sig.flags)
            for text in texts:
                if sig.search(text) and lits:
                    assert any(lit in text.lower() for lit in lits), (issue.id, sig.pattern)


# --- reading -----------------------------------------------------------------------------------


def test_read_log_rejects_what_is_not_a_log(tmp_path: Path):
    cases = {
        "missing.log": None,
        "empty.log": b"",
        "blank.log": b"\n\n   \r\n",
        "binary.bin": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8,
        "log.gz": gzip.compress(b"NameError: name 's0' is not defined\n"),
    }
    for name, data in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(UsageError) as exc:
            read_log(str(path))
        assert "\n" not in str(exc.value) and "—" in str(exc.value), str(exc.value)
    with pytest.raises(UsageError, match="directory"):
        read_log(str(tmp_path))


def test_read_log_decodes_utf16_and_bad_utf8(tmp_path: Path):
    (tmp_path / "ps.log").write_bytes("NameError: name 's0' is not defined\r\n".encode("utf-16"))
    assert b"s0" in read_log(str(tmp_path / "ps.log")).data
    (tmp_path / "mixed.log").write_bytes(b"caf\xe9 NameError: name 's0' is not defined\n")
    assert b"NameError" in read_log(str(tmp_path / "mixed.log")).data


# --- the command -------------------------------------------------------------------------------

ALIGN_LOG = "Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=2\n"


def need(issue_id: str) -> None:
    if registry().find(issue_id) is None:
        pytest.skip(f"{issue_id} not registered yet")


def test_cli_text_and_exit_codes(tmp_path: Path):
    need("view-dtype-align")
    log = tmp_path / "run.log"
    log.write_text("some output\n" + ALIGN_LOG)
    proc = run_cli(["explain", "--log", str(log)])
    assert proc.returncode == 0, proc.stderr
    assert "view-dtype-align" in proc.stdout and "line 2" in proc.stdout
    assert "\x1b[" not in proc.stdout, "no colour when stdout is not a terminal"
    assert "TORCHINDUCTOR_ALIGNMENT_ASSERTS" in proc.stdout, "the workarounds are shown"
    log.write_text(
        "Traceback (most recent call last):\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n"
    )
    proc = run_cli(["explain", "--log", str(log)])
    assert proc.returncode == 1 and "no known issue matched" in proc.stdout


#: Only a "looks like": a shared symptom (a partial signature) with Inductor's frames around it.
POSSIBLE_LOG = (
    '  File "/venv/lib/python3.11/site-packages/torch/_inductor/select_algorithm.py", line 1905\n'
    "torch._inductor.exc.InductorError: LoweringException: No valid triton configs.\n"
)


def test_cli_exit_code_contract_for_possible_matches(tmp_path: Path):
    """Exit 0 only for a sure match ("this is X"); a log with only "looks like" exits 1, like one with
    nothing, unless --match possible (or INDUCTOR_DOCTOR_MATCH=possible) asks for it; JSON says which."""
    need("view-dtype-align")
    need("triton-shared-memory")
    sure, possible, nothing = tmp_path / "sure.log", tmp_path / "possible.log", tmp_path / "nothing.log"
    sure.write_text("some output\n" + ALIGN_LOG)
    possible.write_text(POSSIBLE_LOG)
    nothing.write_text("RuntimeError: mat1 and mat2 shapes cannot be multiplied\n")
    table = {}
    for log in (sure, possible, nothing):
        ways = (([], None), (["--match", "possible"], None), ([], {"INDUCTOR_DOCTOR_MATCH": "possible"}))
        for extra, env in ways:
            proc = run_cli(["explain", "--log", str(log), "--format", "json", *extra], env=env)
            doc = json.loads(proc.stdout)
            validate("triage", doc)
            assert doc["summary"]["diagnosed"] is (proc.returncode == 0)
            table[(log.stem, bool(extra or env))] = proc.returncode
    assert table == {
        ("sure", False): 0, ("sure", True): 0,
        ("possible", False): 1, ("possible", True): 0,
        ("nothing", False): 1, ("nothing", True): 1,
    }
    text = run_cli(["explain", "--log", str(possible)])
    assert "this looks like triton-shared-memory" in text.stdout and "exits 1" in text.stdout
    assert text.returncode == 1


@pytest.mark.slow
def test_report_log_carries_the_same_contract_and_exits_0(tmp_path: Path):
    """report describes (exit 0); its triage says whether the log was diagnosed, by the same rule."""
    need("triton-shared-memory")
    log = tmp_path / "possible.log"
    log.write_text(POSSIBLE_LOG)
    proc = run_cli(["report", "--static", "-q", "--log", str(log), "--format", "json"], timeout=600)
    assert proc.returncode == 0, proc.stderr
    triage = json.loads(proc.stdout)["triage"]
    assert triage["summary"]["partial"] == 1 and triage["summary"]["diagnosed"] is False


def test_cli_colour_only_when_asked_and_never_with_no_color():
    need("view-dtype-align")
    coloured = run_cli(["explain", "--log", "-"], input=ALIGN_LOG, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in coloured.stdout
    plain = run_cli(["explain", "--log", "-"], input=ALIGN_LOG, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in plain.stdout and "view-dtype-align" in plain.stdout


@pytest.mark.parametrize("content", [None, b"", b"\x00\x01\x02\x03" * 100])
def test_cli_unusable_input_is_one_line_and_exit_2(tmp_path: Path, content):
    path = tmp_path / "in.log"
    if content is not None:
        path.write_bytes(content)
    proc = run_cli(["explain", "--log", str(path)])
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_cli_stdin_and_json_schema():
    need("view-dtype-align")
    proc = run_cli(["explain", "--log", "-", "--format", "json"], input="\x1b[31m" + ALIGN_LOG + "\x1b[0m")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    assert doc["schema"] == "inductor-doctor/triage/v1"
    assert doc["environment"]["log"]["source"] == "-" and doc["environment"]["log"]["ansi_stripped"]
    top = doc["results"][0]
    assert top["id"] == "view-dtype-align" and top["confidence"] == EXACT
    assert top["evidence"][0]["line"] == 1
    assert doc["check"]["command"] == "inductor-doctor check --only view-dtype-align"


def test_cli_no_match_json_validates():
    proc = run_cli(["explain", "--log", "-", "--format", "json"], input="all good\n")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    assert doc["summary"]["matched"] == 0 and doc["check"]["command"] is None


def test_cli_offers_the_check_only_where_torch_is_importable(tmp_path: Path):
    need("view-dtype-align")
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    proc = run_cli(["explain", "--log", "-", "--format", "json", "--python", str(bare)], input=ALIGN_LOG)
    doc = json.loads(proc.stdout)
    assert doc["check"]["available"] is False and "torch is not installed" in doc["check"]["reason"]
    assert doc["check"]["command"].endswith(f"--python {bare}")
    proc = run_cli(["explain", "--log", "-", "--python", str(bare)], input=ALIGN_LOG)
    assert "to confirm on a machine with torch" in proc.stdout


def test_cli_bad_python_is_a_usage_error(tmp_path: Path):
    proc = run_cli(["explain", "--log", "-", "--python", str(tmp_path / "nope")], input=ALIGN_LOG)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_check_runs_the_offered_check():
    """With --check, the matched issues are checked here and their verdicts come back."""
    need("triton-constexpr-dynamic")
    log = "@triton.jit\ndef kernel(x_ptr, n: tl.constexpr):\nNameError: name 's0' is not defined\n"
    proc = run_cli(["explain", "--log", "-", "--check", "--format", "json"], input=log, timeout=900)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    check = doc["check"]
    if not check["available"]:
        pytest.skip(check["reason"])
    assert check["ran"] and check["error"] is None, check
    assert {r["id"] for r in check["results"]} == {"triton-constexpr-dynamic"}
    text = run_cli(["explain", "--log", "-", "--check"], input=log, timeout=900).stdout
    assert "checked here with" in text and "triton-constexpr-dynamic on" in text


@pytest.mark.parametrize("as_pipe", [False, True], ids=["file", "pipe"])
def test_a_log_of_many_blocks_is_read_whole_with_every_match_once(tmp_path, monkeypatch, as_pipe):
    """Blocks are small here: the head's versions, a multi-line error cut by a block's end, and the
    tail are all found, each once, on the right line, whether the log is a file or a pipe."""
    import io

    from inductor_doctor.triage import stream

    monkeypatch.setattr(stream, "BLOCK", 64 * 1024)
    monkeypatch.setattr(stream, "CONTEXT", 16 * 1024)
    filler = "".join(f"[inductor] compiling kernel {i:08d} abcdefghij\n" for i in range(60_000))  # ~3 MB
    multi = ("InductorError: CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/x.cpp -fopenmp\n\n"
             "Output:\n/tmp/x.cpp:2:10: fatal error: 'omp.h' file not found\n")
    text = "PyTorch version: 2.5.1\n" + filler + multi + filler + "NameError: name 's0' is not defined\n"
    blob = text.encode()
    if as_pipe:
        result = triage_stream(io.BufferedReader(io.BytesIO(blob)), ISSUES, name="-")
    else:
        path = tmp_path / "big.log"
        path.write_bytes(blob)
        with path.open("rb") as fh:
            result = triage_stream(fh, ISSUES, name=str(path))
    lines = text.splitlines()
    assert result.log.lines == len(lines) and result.log.size == len(blob) and not result.log.truncated
    by_id = {m.issue.id: m for m in result.matches}
    first = lines.index("InductorError: CppCompileError: C++ compile error") + 1
    assert by_id["cpp"].evidence[0].line == first
    assert by_id["cpp"].occurrences == 1
    assert by_id["constexpr"].evidence[0].line == len(lines) and by_id["constexpr"].occurrences == 1
    assert result.versions["torch"] == ["2.5.1"]
    # Every cut of the log into blocks finds the same.
    for block in (4096, 5000, 70_000):
        monkeypatch.setattr(stream, "BLOCK", block)
        monkeypatch.setattr(stream, "CONTEXT", 4096 + 512)
        again = triage_stream(io.BytesIO(blob), ISSUES)
        assert _shape(again) == _shape(result), block


def _shape(result):
    return [(m.issue.id, m.confidence, [e.line for e in m.evidence], m.occurrences) for m in result.matches]


def test_the_streaming_entry_point_takes_lines_and_stays_small():
    """An iterable of lines (str or bytes) is a log too; a log many times the block size is
    triaged with memory of a few blocks (measured in a subprocess: its peak RSS)."""
    lines = ["step 1 loss=0.5\n", b"NameError: name 's3' is not defined\n"]
    result = triage_stream(iter(lines), ISSUES, name="run")
    assert ids(result) == ["constexpr"] and result.matches[0].evidence[0].line == 2
    code = (
        "import resource, sys\n"
        "from inductor_doctor.triage.engine import triage_stream\n"
        "def lines():\n"
        "    yield '@triton.jit\\n'\n"
        "    for i in range(3_000_000):\n"
        "        yield f'2026-11-22 07:00:00 INFO step={i} loss={i * 1e-6:.6f} tokens={i * 7}\\n'\n"
        "    yield \"NameError: name 's2' is not defined\\n\"\n"
        "r = triage_stream(lines())\n"
        "assert r.matches and r.log.lines == 3_000_002, r.to_dict()['summary']\n"
        # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child of a pytest process
        # that has imported torch would start from that process's size.
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')]\n"
        "usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(int(hwm[0].split()[1]) // 1024 if hwm else usage // 1024)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) < 150, f"peak {proc.stdout.split()[-1]} MB for a 190 MB log"


def test_endless_pipe_is_given_up_after_the_stream_cap(monkeypatch):
    import io

    from inductor_doctor.triage import stream

    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            b[:] = b"y\n" * (len(b) // 2) + b"y" * (len(b) % 2)
            return len(b)

    monkeypatch.setattr(stream, "MAX_STREAM_BYTES", 8 << 20)
    result = triage_stream(io.BufferedReader(Endless()), ISSUES)
    assert result.log.truncated and result.log.size == 8 << 20 and not result.matches


@pytest.mark.parametrize("seed", range(5))
def test_the_grouped_literal_search_finds_what_find_finds(seed):
    """Every occurrence `bytes.find` sees, the grouped search reports (overlapping ones, at a
    block's edges, literals on every line that move to `bytes.find`)."""
    import random

    from inductor_doctor.triage import stream

    rng = random.Random(seed)
    alphabet = b"abcdeflmnorst_: '\n"
    literals = {bytes(rng.choice(alphabet) for _ in range(rng.randint(3, 9))) for _ in range(40)}
    literals |= {b"every", b"verylong"}
    text = bytearray()
    for _ in range(20000):
        text += bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.02:
            text += rng.choice(sorted(literals))
    low = bytes(text) + b" every" * 6000
    search = stream.LiteralSearch()
    lo, hi = 1000, len(low) - 3
    got = search.find(low, lo, hi, literals)
    for lit in literals:
        want = [i for i in range(lo, hi) if low.startswith(lit, i)]
        if lit in search.dense:
            assert got.get(lit, [])[:1] == want[:1]
        else:
            assert got.get(lit, []) == want, lit


def test_unless_gives_a_same_shaped_error_to_another_bug():
    """The NameError of a wrapper's assert_size_stride (pytorch#108014) is not a Triton constexpr one."""
    sig = Signature(r"NameError: name '[su]\d+' is not defined", unless=r"assert_size_stride\(")
    issues = [_issue("constexpr", sig)]
    wrapper = ("  File \"/tmp/x.py\", line 68, in call\n"
               "    assert_size_stride(arg1_1, (8, s1), (s1, 1))\n"
               "                                ^^\n"
               "NameError: name 's1' is not defined. Did you mean: 's2'?\n")
    assert ids(run(wrapper, issues)) == []
    # The same error with the assert far above it (another frame of the log) still counts.
    far = wrapper.replace("NameError", "a\nb\nc\nd\nNameError")
    assert ids(run(far, issues), EXACT) == ["constexpr"]
    # The canary engine classifies with the same rule.
    assert sig.search(wrapper) is None and sig.search(far) is not None
    # ... as does the line-by-line scan of a signature with no literal to look for.
    by_line = Signature(r"\w{4}\w{5}: \w{4} .[su]\d+'", unless=r"assert_size_stride\(")
    assert required_literals(by_line.pattern, by_line.flags) is None
    assert ids(run(wrapper, [_issue("constexpr", by_line)])) == []
    assert ids(run(far, [_issue("constexpr", by_line)])) == ["constexpr"]


def test_log_context_keeps_an_exact_match_exact_only_in_its_context():
    sig = Signature("conflicting declaration", log_context=("block_mask", "flex_attention"))
    issues = [_issue("block-mask", sig)]
    error = "x.cpp:288:10: error: conflicting declaration 'auto i8'\n"
    inductor = '  File "/venv/lib/python3.11/site-packages/torch/_inductor/codecache.py", line 2205\n'
    assert ids(run(error, issues)) == [], "a C++ error with nothing of torch in the log is no match"
    assert ids(run(inductor + error, issues), PARTIAL) == ["block-mask"]
    assert ids(run("torch.compile(create_block_mask)(...)\n" + error, issues), EXACT) == ["block-mask"]


@pytest.mark.parametrize(
    "subject, ties, loose",
    [
        (("compile-cache",), "PermissionError: [Errno 13] Permission denied: '/tmp/torchinductor_ab/x'",
         '  File "/venv/site-packages/torch/_dynamo/debug_utils.py", line 261, in _cuda_system_info_comment'),
        (("triton-kernel",), "@triton.jit\ndef kernel(x_ptr):", "import numpy"),
        ((), '  File "/venv/site-packages/torch/_inductor/compile_fx.py", line 1421', "make: *** Error 2"),
        ((r"flex_attention\(",), "out = flex_attention(q, k, v)", "out = attention(q, k, v)"),
    ],
)
def test_a_weak_match_needs_its_subject_in_the_log(subject, ties, loose):
    """Each weak pattern declares the evidence that ties it to its issue (`Signature.subject`: a name,
    or a regex of its own; none is the compile stack at all): with it a "looks like", without it
    nothing, whatever the log's length."""
    issues = [_issue("weak", Signature(r"\[Errno 13\] Permission denied", "partial", subject=subject))]
    error = "PermissionError: [Errno 13] Permission denied: 'x'\n"
    assert ids(run(ties + "\n" + error, issues), PARTIAL) == ["weak"]
    assert ids(run(loose + "\n" + error, issues)) == []
    assert ids(run("x\n" * 300_000 + ties + "\n" + "y\n" * 300_000 + error, issues), PARTIAL) == ["weak"]
    own = [_issue("own", Signature(r"check_compiler_is_gcc", "partial", subject=("self",)))]
    assert ids(run("in check_compiler_is_gcc\n", own), PARTIAL) == ["own"]


def test_the_sign_of_a_look_alike_removes_the_match():
    """`against` anywhere in the log (the look-alike the issue's page names): no match at all, where
    the same words without it are the issue."""
    sig = Signature("Torch not compiled with CUDA enabled", against=r"\bmacOS\b")
    issues = [_issue("cpu-only", sig)]
    error = "AssertionError: Torch not compiled with CUDA enabled\n"
    assert ids(run(error, issues), EXACT) == ["cpu-only"]
    assert ids(run("OS: macOS 14.2 (arm64)\n" + error, issues)) == []
    assert ids(run(error + "x\n" * 500_000 + "OS: macOS 14.2\n", issues)) == []


@pytest.mark.parametrize(
    "wording",
    [
        # torch 2.x (2.5.1, 2.6.0, 2.9.0, 2.13.0: torch/backends/cudnn/__init__.py), two spaces and all
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found "
        "runtime version (8, 9, 2). PyTorch already comes bundled with cuDNN.",
        # torch 1.x with tuples
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 0, 4) but linked "
        "against (7, 6, 5)",
        # torch 1.x before, with integers, and the oldest wording
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against 7603 but linked "
        "against 7005",
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7005",
        # wrapped by a terminal or a log collector
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled\n    against (9, 8, 0) but found "
        "runtime version (9, 7, 0).",
    ],
)
def test_every_wording_of_a_message_across_releases(wording):
    """A message torch worded differently before a release is matched in each wording (the
    signature's comment says which release and file each comes from)."""
    need("cuda-libs-shadowed")
    result = run(wording + "\n", list(registry()))
    assert ids(result, EXACT) == ["cuda-libs-shadowed"], [(m.issue.id, m.confidence) for m in result.matches]


def test_the_ld_library_path_line_makes_the_loader_error_sure(tmp_path: Path):
    """The log's own LD_LIBRARY_PATH naming a CUDA library directory is the shadowing source: the
    symbol error beside it is the issue, and the line is shown as its context."""
    need("cuda-libs-shadowed")
    error = ("ImportError: /venv/lib/python3.12/site-packages/torch/lib/../../nvidia/cusparse/lib/"
             "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12\n")
    for before, sure in (("", False), ("$ echo $LD_LIBRARY_PATH\n/usr/local/cuda-12.1/lib64:\n", True),
                         ("LD_LIBRARY_PATH=/opt/venv/lib\n", False)):
        log = tmp_path / "ld.log"
        log.write_text(before + error.replace("nvidia/cusparse/lib/", "x/"))
        doc = json.loads(run_cli(["explain", "--log", str(log), "--format", "json"]).stdout)
        match = {r["id"]: r for r in doc["results"]}.get("cuda-libs-shadowed")
        assert match is not None and (match["confidence"] == "exact") is sure, (before, match)
        if sure:
            context = [e for e in match["evidence"] if e["strength"] == "context"]
            assert context and "cuda-12.1" in " ".join(context[0]["text"]), match["evidence"]


def test_a_torch_beside_a_gpu_it_has_no_kernels_for_is_sure(tmp_path: Path):
    """"no kernel image" is every CUDA program's; beside the log's torch release and a GPU capability
    that release's arch list (core/_data/releases.json) does not serve, it is this issue."""
    need("torch-gpu-arch-missing")
    body = ('  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1736\n'
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    cases = [
        ("PyTorch version: 2.5.1+cu124\nGPU 0: RTX 5090, compute capability: 12.0\n", "exact"),
        ("PyTorch version: 2.5.1+cu124\nGPU 0: RTX 3090, compute capability: 8.6\n", "partial"),
        ("GPU 0: RTX 5090, compute capability: 12.0\n", "partial"),  # which torch: not said
    ]
    for head, confidence in cases:
        log = tmp_path / "arch.log"
        log.write_text(head + body)
        doc = json.loads(run_cli(["explain", "--log", str(log), "--format", "json"]).stdout)
        (match,) = [r for r in doc["results"] if r["id"] == "torch-gpu-arch-missing"]
        assert match["confidence"] == confidence, (head, match)
        if confidence == "exact":
            assert "sm_120" in match["note"] and "sm_90" in match["note"]
