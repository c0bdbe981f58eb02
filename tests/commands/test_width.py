"""What a user copies is never cut, at any width: a workaround's command stands whole on its own
line, and the paths and mangled symbols in a reason are never broken inside (only between words).
Every test runs the real CLI at COLUMNS=40 (the doctor lays out for 60 at least), 80 and 200."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import List

import pytest
from conftest import run_cli, which_or_skip

pytestmark = pytest.mark.slow
WIDTHS = ("40", "80", "200")
OMP = "openmp-headers-missing"
PATH = ("/opt/conda/envs/training-2026/lib/python3.12/site-packages/torch/include/torch/csrc/inductor/"
        "cpp_prefix.h")
SYMBOL = ("_ZNK2at10TensorBase14const_data_ptrIN3c104HalfETnNSt9enable_ifIXntsr3stdE10is_const_vIT_EEiE4type"
          "ELi0EEEPKS5_v")


def commands_of(issue: str) -> List[str]:
    data = json.loads(run_cli(["explain", issue, "--format", "json"]).stdout)
    return [w["command"] for w in data["issue"]["workarounds"] if w.get("command")]


def assert_whole(out: str, commands: List[str]) -> None:
    lines = [ln.strip() for ln in out.splitlines()]
    for command in commands:
        assert f"$ {command}" in lines, f"{command!r} is not whole on a line of its own:\n{out}"


@pytest.mark.parametrize("columns", WIDTHS)
def test_check_prints_each_command_whole(columns: str, tmp_path: Path):
    clang = which_or_skip("clang++-16")
    env = {"CXX": clang, "COLUMNS": columns, "NO_COLOR": "1", "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)}
    proc = run_cli(["check", "--static", "--only", OMP, "-q"], env=env)
    assert proc.returncode == 1, proc.stderr[-2000:]
    commands = [c for c in commands_of(OMP) if c.startswith(("export", "apt-get"))]
    assert any("cut -d. -f1" in c for c in commands)  # the one that used to be split
    assert_whole(proc.stdout, commands)


@pytest.mark.parametrize("columns", WIDTHS)
def test_explain_and_triage_print_each_command_whole(columns: str):
    env = {"COLUMNS": columns, "NO_COLOR": "1"}
    assert_whole(run_cli(["explain", OMP, "--full"], env=env).stdout, commands_of(OMP))
    log = "fatal error: 'omp.h' file not found\n#include <omp.h>\n"
    triage = run_cli(["explain", "--log", "-"], env=env, input=log)
    assert triage.returncode == 0, triage.stderr
    assert_whole(triage.stdout, commands_of(OMP))


@pytest.mark.parametrize("columns", WIDTHS)
def test_paths_and_symbols_are_never_cut(columns: str, tmp_path: Path):
    """A reason with a long path and a mangled symbol, through `merge` (any report's reason is
    printed so): each stays whole on one line, however narrow."""
    args = ["check", "--static", "--only", "const-data-ptr-abi", "--format", "json"]
    base = json.loads(run_cli(args).stdout)
    report = copy.deepcopy(base)
    [r] = report["results"]
    r.update(status="affected", reason=f"{PATH}:4:10: undefined symbol {SYMBOL}, see `inductor-doctor "
                                       f"explain {r['id']} --full` for more")
    path = tmp_path / "a.json"
    path.write_text(json.dumps(report))
    out = run_cli(["merge", str(path)], env={"COLUMNS": columns, "NO_COLOR": "1"}).stdout
    for token in (f"{PATH}:4:10:", SYMBOL, f"`inductor-doctor explain {r['id']} --full`"):
        assert any(token in line for line in out.splitlines()), f"{token} cut:\n{out}"
