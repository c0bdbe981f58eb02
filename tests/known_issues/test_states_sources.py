"""Broken states of this machine for the issues whose facts come from release sources, made for real
with torch 2.13.0: the CompilerBisector's state left in an Inductor cache (bisect-state-leftover).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import run_json
from test_rules_environment import make_facts, only

from inductor_doctor.core.facts import BisectState
from inductor_doctor.core.model import Status

BISECT = "bisect-state-leftover"
#: A plain compile, as any program makes it: how many graphs Dynamo captured and which backend
#: compiled them (Inductor writes code to its cache; eager writes nothing).
COMPILE = (
    "import os, torch\n"
    "from torch._dynamo.utils import counters\n"
    "f = torch.compile(lambda x: torch.sin(x) + 1)\n"
    "f(torch.randn(8))\n"
    "cache = os.environ['TORCHINDUCTOR_CACHE_DIR']\n"
    "code = [n for _, _, fs in os.walk(cache) for n in fs if n.endswith('.py')]\n"
    "print(counters['stats']['unique_graphs'], len(code))\n"
)


def _bisector(cache, *args):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "torch._inductor.compiler_bisector", *args], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    cache = tmp_path_factory.mktemp("bisect") / "inductor"
    out = _bisector(cache, "start")
    assert "Starting bisection process with system: eager" in out.stdout, out.stdout + out.stderr
    yield cache
    _bisector(cache, "end")


def test_a_started_bisection_silently_turns_a_plain_compile_eager_and_the_check_says_so(started):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(started))
    graphs, code = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True,
                                  timeout=300, check=True).stdout.split()
    assert (graphs, code) == ("1", "0"), "Dynamo captured the graph, and Inductor compiled nothing"
    row = run_json(["check", "--static", "--only", BISECT], env={"TORCHINDUCTOR_CACHE_DIR": str(started)})
    finding = row["results"][0]
    assert (finding["status"], finding["basis"]) == ("affected", "static"), finding
    assert "bisect_status.txt" in finding["reason"] and "'eager' backend" in finding["reason"]
    assert f"rm -rf '{started / 'bisect'}'" in [w["command"] for w in finding["workarounds"]]


@pytest.mark.slow  # a real Inductor compile of a C++ kernel: ~50 s on a 2-core machine
def test_after_end_the_same_compile_uses_inductor_and_the_check_is_ok(tmp_path):
    cache = tmp_path / "inductor"
    _bisector(cache, "start")
    _bisector(cache, "end")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    graphs, code = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True,
                                  timeout=300, check=True).stdout.split()
    assert graphs == "1" and int(code) > 0
    finding = run_json(["check", "--static", "--only", BISECT], env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    assert finding["results"][0]["status"] == "ok", finding["results"][0]


def test_rule_on_recorded_facts():
    state = BisectState(directory="/tmp/torchinductor_u/bisect", exists=True,
                        status_file="/tmp/torchinductor_u/bisect/bisect_status.txt", backend="aot_eager",
                        subsystem="decomposition")
    out = only(BISECT, make_facts(bisect=state))
    assert out.status is Status.AFFECTED
    assert "'aot_eager' backend, with its decomposition subsystem disabled" in out.reason
    env = only(BISECT, make_facts(env={"TORCH_BISECT_BACKEND": "eager"},
                                  bisect=BisectState(directory="/x/bisect")))
    assert env.status is Status.AFFECTED and "TORCH_BISECT_BACKEND=eager" in env.reason
    assert only(BISECT, make_facts(bisect=BisectState(directory="/x/bisect"))).status is Status.OK
    leftover = BisectState(directory="/x/bisect", exists=True, backend="eager")
    old = only(BISECT, make_facts(torch_version="2.5.1", bisect=leftover))
    assert old.status is Status.NOT_APPLICABLE  # torch.compile reads the state from 2.6 on
