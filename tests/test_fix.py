"""`inductor-doctor fix`: the last check's workarounds, tried here, as commands a shell can eval.

The loop users run, for real: break the machine (a clang without OpenMP as Inductor's compiler; the
torch_xla release with pytorch/xla#8464), `check`, `eval "$(inductor-doctor fix --shell)"`, `check`
again: clean. What cannot be tried without changing the system is advice, commented out.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from conftest import run_cli, venv_python, which_or_skip

from inductor_doctor.schemas import validate

pytestmark = pytest.mark.slow


def doctor(args: str, cache: Path, extra: str = "", python: str = "") -> str:
    where = f" --python {shlex.quote(python)}" if python else ""
    return f"{extra}{shlex.quote(sys.executable)} -m inductor_doctor {args}{where}"


def shell(script: str, cache: Path, env: Dict[str, str]) -> subprocess.CompletedProcess:
    """The user's bash, with the doctor's cache of this test."""
    full = {**os.environ, **env, "INDUCTOR_DOCTOR_CACHE_DIR": str(cache)}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=full, timeout=900)


def test_eval_fix_shell_clears_a_clang_without_openmp(tmp_path: Path):
    clang = which_or_skip("clang++-16")
    cache = tmp_path / "cache"
    env = {"CXX": clang}
    first = run_cli(["check", "--only", "openmp-headers-missing", "--format", "json", "-q"],
                    env={**env, "INDUCTOR_DOCTOR_CACHE_DIR": str(cache)})
    assert first.returncode == 1, first.stderr[-2000:]
    fixed = run_cli(["fix", "--format", "json", "-q"], env={**env, "INDUCTOR_DOCTOR_CACHE_DIR": str(cache)})
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    doc = json.loads(fixed.stdout)
    validate("fix", doc)
    verified = [i for i in doc["results"] if i["verified"]]
    assert [(i["issue"], i["command"]) for i in verified] == [("openmp-headers-missing", "export CXX=g++")]
    assert all(not i["verified"] for i in doc["results"] if i["kind"] == "install")  # never tried
    # The loop itself, in the user's shell: the lines are valid shell, eval them, check again.
    script = (f'lines="$({doctor("fix --shell -q", cache)})" || exit 9\n'
              'bash -n <<<"$lines" || exit 8\n'
              'eval "$lines"\n'
              f'{doctor("check --only openmp-headers-missing -q", cache)}')
    loop = shell(script, cache, env)
    assert loop.returncode == 0, loop.stdout[-2000:] + loop.stderr[-2000:]
    assert "1 ok" in loop.stdout


def test_dockerfile_lines_and_advice_commented(tmp_path: Path):
    clang = which_or_skip("clang++-16")
    cache = tmp_path / "cache"
    env = {"CXX": clang, "INDUCTOR_DOCTOR_CACHE_DIR": str(cache)}
    run_cli(["check", "--static", "--only", "openmp-headers-missing", "-q"], env=env)
    out = run_cli(["fix", "--dockerfile", "-q"], env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if ln and not ln.startswith("#")]
    assert lines == ['ENV CXX="g++"'], out.stdout
    assert "# RUN apt-get install" in out.stdout  # advice: visible, never run by pasting


def test_nothing_on_record_is_one_line_and_exit_2(tmp_path: Path):
    out = run_cli(["fix"], env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "empty")})
    assert out.returncode == 2
    assert out.stdout == "" and out.stderr.count("\n") == 1
    assert "run `inductor-doctor check` first" in out.stderr


def test_a_clean_check_has_nothing_to_fix(tmp_path: Path):
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    run_cli(["check", "--static", "--only", "openmp-headers-missing", "-q"], env={**env, "CXX": "g++"})
    out = run_cli(["fix", "--shell"], env=env)
    assert out.returncode == 0 and "nothing to fix" in out.stdout
    assert [ln for ln in out.stdout.splitlines() if not ln.startswith("#")] == []


@pytest.mark.envs
def test_eval_fix_shell_clears_xla_donor_hash_on_torch_xla_2_5_1(tmp_path: Path):
    """torch_xla 2.5.1 has pytorch/xla#8464: the verified export, then a clean check of that venv."""
    py = venv_python("xla-2.5.1")
    cache = tmp_path / "cache"
    script = (f'{doctor("check --only xla-donor-hash -q", cache, python=py)} >/dev/null; '
              'test $? -eq 1 || exit 7\n'
              f'lines="$({doctor("fix --shell -q", cache, python=py)})" || exit 9\n'
              'grep -qx "export XLA_ENABLE_PARAM_ALIASING=0" <<<"$lines" || { echo "$lines"; exit 6; }\n'
              'eval "$lines"\n'
              f'{doctor("check --only xla-donor-hash -q", cache, python=py)}')
    loop = shell(script, cache, {})
    assert loop.returncode == 0, loop.stdout[-3000:] + loop.stderr[-2000:]
    assert "1 ok" in loop.stdout
