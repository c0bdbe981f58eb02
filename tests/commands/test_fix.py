"""`inductor-doctor fix`: the last check's workarounds, tried here, as commands a shell can eval.

The loop users run, for real: break the machine (a clang without OpenMP as Inductor's compiler; the
torch_xla release with pytorch/xla#8464), `check`, `eval "$(inductor-doctor fix --shell)"`, `check`
again: clean. What cannot be tried without changing the system is advice, commented out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
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


DOCKER_LINE = re.compile(r'^(#.*|RUN \S.*|ENV [A-Za-z_][A-Za-z0-9_]*="(?:[^"\\$]|\\["\\$])*")?$')


def dockerfile_instructions(text: str) -> list:
    """`text` as Docker reads it, strictly: every line blank, a whole-line comment, `RUN ...`, or
    `ENV NAME="..."` with `"`, `\\` and `$` escaped (so no mid-line `#` comment, no unset as
    `ENV X=""`); then parsed by dockerfile-parse, whose ENV parser fails on a mid-line `#`."""
    from dockerfile_parse import DockerfileParser

    bad = [ln for ln in text.splitlines() if not DOCKER_LINE.match(ln)]
    assert bad == [], bad
    with tempfile.TemporaryDirectory() as where:
        parser = DockerfileParser(path=where, env_replace=False)
        parser.content = "FROM scratch\n" + text
        assert parser.envs is not None  # raises ValueError on `ENV X=""  # a comment`
        return [(i["instruction"], i["value"]) for i in parser.structure if i["instruction"] != "COMMENT"][1:]


def test_dockerfile_from_an_activated_venv_is_valid_and_sets_only_the_workaround(tmp_path: Path):
    """An activated venv exports PS1 (and VIRTUAL_ENV), which a non-interactive bash drops: that is
    no part of the workaround, and no `ENV PS1=""  # unset: ...` line (a value with a comment in it)."""
    clang = which_or_skip("clang++-16")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    cache = tmp_path / "cache"
    script = (f'source {shlex.quote(str(venv / "bin" / "activate"))}\nexport PS1\n'
              f'{doctor("check --static --only openmp-headers-missing -q", cache)} >/dev/null\n'
              f'{doctor("fix --dockerfile -q", cache)}')
    out = shell(script, cache, {"CXX": clang, "PS1": "$ "})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "PS1" not in out.stdout and "VIRTUAL_ENV" not in out.stdout, out.stdout
    assert dockerfile_instructions(out.stdout) == [("ENV", 'CXX="g++"')], out.stdout


def test_dockerfile_lines_of_an_unset_and_of_awkward_values():
    """Rendered from a document: an unset is a comment (a Dockerfile cannot unset), and `$`, `"`,
    `\\` and `#` in a value stay in the value."""
    from inductor_doctor.render.fix_dockerfile import render

    item = {"issue": "x", "how": "verified here:\nclean", "verified": True, "command": "export A=1",
            "text": "t", "env": {"GONE": None, "ODD": 'a"b$c\\d #e', "TWO": "a\nb"}}
    text = render({"python": "/usr/bin/python3", "results": [item]})
    assert dockerfile_instructions(text) == [("ENV", 'ODD="a\\"b\\$c\\\\d #e"')], text
    assert "# unset GONE: a Dockerfile cannot unset a variable" in text


def test_explain_and_fix_say_which_check_they_read_and_that_its_settings_differ(tmp_path: Path):
    """A check made with CXX=clang++-16, then explain and fix without it: they say when that check
    ran and that it ran under other settings; under the same settings they say nothing of it."""
    clang = which_or_skip("clang++-16")
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200", "NO_COLOR": "1",
           "CXX": "g++"}
    run_cli(["check", "--static", "--only", "openmp-headers-missing", "-q"], env={**env, "CXX": clang})
    differ = f"CXX: {clang} then, g++ now"
    page = run_cli(["explain", "openmp-headers-missing"], env=env).stdout
    when = r"\(last check, \d{4}-\d\d-\d\d \d\d:\d\d UTC\):"
    assert re.search(r"^Here: affected on cpu " + when, page, re.M), page
    assert f"that check ran under other settings ({differ})" in " ".join(page.split()), page
    data = json.loads(run_cli(["explain", "openmp-headers-missing", "--format", "json"], env=env).stdout)
    validate("explain", data)
    assert data["record"]["settings_differ"] == [differ]
    fixed = json.loads(run_cli(["fix", "--no-verify", "--format", "json", "-q"], env=env).stdout)
    validate("fix", fixed)
    assert fixed["settings_differ"] == [differ]
    for how in (["fix", "--no-verify", "-q"], ["fix", "--no-verify", "--shell", "-q"]):
        out = run_cli(how, env=env).stdout
        assert f"that check ran under other settings ({differ})" in out and " UTC)" in out, out
    same = {**env, "CXX": clang}
    assert "other settings" not in run_cli(["explain", "openmp-headers-missing"], env=same).stdout
    assert "other settings" not in run_cli(["fix", "--no-verify", "-q"], env=same).stdout


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
