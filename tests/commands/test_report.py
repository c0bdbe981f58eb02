"""`inductor-doctor report`: what a maintainer asks for, in one paste, with nothing secret in it.

Run for real on this machine: torch's own `collect_env` beside the report, line by line; secrets
planted in the environment and in the log; the size bound GitHub imposes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from inductor_doctor.schemas import validate

pytestmark = pytest.mark.slow

#: collect_env lines that change from one second to the next (clock speeds).
VOLATILE = re.compile(r"^(CPU( max| min)? MHz|BogoMIPS|CPU\(s\) scaling MHz|Frequency boost):")
SECRETS = {
    "TORCHINDUCTOR_CACHE_DIR": "/home/secretuser/inductor-cache",
    "TRITON_CACHE_DIR": "/home/secretuser/triton-cache",
    "HF_TOKEN": "hf_" + "Q" * 34,
    "GITHUB_TOKEN": "ghp_" + "Z" * 36,
}


@pytest.fixture(scope="module")
def report_md(tmp_path_factory) -> str:
    cache = tmp_path_factory.mktemp("cache")
    proc = run_cli(["report", "--static", "-q"], env={**SECRETS, "INDUCTOR_DOCTOR_CACHE_DIR": str(cache)},
                   timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_every_collect_env_line_is_in_the_report(report_md: str):
    """What `python -m torch.utils.collect_env` prints here, every line (clock speeds aside)."""
    env = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, text=True,
                         timeout=300)
    lines = [ln.rstrip() for ln in env.stdout.splitlines()
             if ln.strip() and not VOLATILE.match(ln) and not ln.startswith("Collecting environment")]
    assert len(lines) > 30, env.stdout[-2000:]
    body = set(ln.rstrip() for ln in report_md.splitlines())
    missing = [ln for ln in lines if ln not in body and "secretuser" not in ln]
    assert not missing, missing[:10]


def test_the_report_adds_the_compile_stack_and_the_verdicts(report_md: str):
    assert report_md.startswith("<details>") and report_md.rstrip().endswith("</details>")
    for what in ("triton", "C++ compiler", "inductor cache", "OpenMP"):
        assert what in report_md, what
    assert "inductor-doctor report:" in report_md  # the summary line a reader sees collapsed


def test_the_doctors_own_part_reads_as_words_not_python(report_md: str):
    """Everything above torch's own collect_env output (which prints `False` itself) says yes, no
    or a dash, never Python's True, False or None."""
    ours = report_md.split("### python -m torch.utils.collect_env", 1)[0]
    literals = re.findall(r"(?<![\w`])(True|False|None)(?![\w`])", ours)
    assert literals == [], [ln for ln in ours.splitlines() if re.search(r"\b(True|False|None)\b", ln)]
    assert re.search(r"C\+\+11 ABI (yes|no)", ours) and re.search(r"OpenMP (yes|no|—)", ours), ours
    if "CUDA_VISIBLE_DEVICES" not in os.environ:
        assert "| CUDA_VISIBLE_DEVICES | — (not set) |" in ours


def test_nothing_secret_leaves(report_md: str):
    for value in SECRETS.values():
        assert value not in report_md
    assert "secretuser" not in report_md
    assert "/home/<user>/inductor-cache" in report_md  # where the cache is still shows


def test_a_log_adds_its_triage_and_its_secrets_stay_out(tmp_path: Path):
    log = tmp_path / "failure.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/home/secretuser/train.py", line 3, in <module>\n'
        "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
        "/home/secretuser/.cache/x.cpp:1:10: fatal error: omp.h: No such file or directory\n"
        f"token {SECRETS['HF_TOKEN']}\n")
    proc = run_cli(["report", "--static", "-q", "--log", str(log), "--format", "json"],
                   env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "secretuser" not in proc.stdout and SECRETS["HF_TOKEN"] not in proc.stdout
    doc = json.loads(proc.stdout)
    validate("report", doc)
    assert doc["triage"]["results"][0]["id"] == "openmp-headers-missing"
    assert doc["collect_env"]["source"] == "torch.utils.collect_env"


def test_without_torch_the_report_still_comes_from_the_probe(tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc = run_cli(["report", "--static", "-q", "--python", str(venv / "bin" / "python"), "--format", "json"],
                   env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    validate("report", doc)
    assert doc["collect_env"]["source"] == "inductor-doctor probe"
    # Nothing of the compile stack can be checked there: said so, never "ok".
    assert [(r["id"], r["status"]) for r in doc["results"] if r["status"] != "not-applicable"] == [
        ("torch-missing", "inconclusive")]
