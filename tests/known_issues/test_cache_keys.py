"""The compile-cache key inputs (probe/cache_key.py) read from the installed torch, and their comparison
across hosts (fleet/cache_keys.py) on recorded facts: who will miss what another compiled, and which
input differs, one line per difference at fleet size.

The real pairs of compiles that show each prediction right are in test_cache_keys_compiles.py
(`-m heavy`); these run on this machine's torch 2.13 and on reports made from one real check.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import REPO, run_cli

from inductor_doctor.core.facts import Facts
from inductor_doctor.fleet.cache_keys import compare
from inductor_doctor.fleet.document import build_document
from inductor_doctor.probe import _config_reads, cache_key
from inductor_doctor.render.fleet_cache import cache_lines

torch = pytest.importorskip("torch")  # the installed torch's files are read, never imported by the doctor
TORCH_DIR = Path(torch.__file__).parent


def _reads(name: str, rel: str = "_inductor/config.py") -> List[_config_reads.EnvRead]:
    return [r for r in _config_reads.reads(str(TORCH_DIR / rel)) if r.name == name]


def test_a_variable_is_judged_by_what_the_release_makes_of_it():
    """`max_autotune = os.environ.get("TORCHINDUCTOR_MAX_AUTOTUNE") == "1"`: 0 is the default, 1 is not."""
    (read,) = _reads("TORCHINDUCTOR_MAX_AUTOTUNE")
    assert read.entry == "max_autotune"
    assert _config_reads.effect(read, "1") == (True, True)
    assert _config_reads.effect(read, "0") == (True, False)
    assert _config_reads.effect(read, None) == (True, False)
    (cxx,) = _reads("CXX")  # `cxx = (None, os.environ.get("CXX", "clang++" if darwin else "g++"))`
    assert cxx.entry == "cpp.cxx"
    assert _config_reads.effect(cxx, None, "linux") == (True, (None, "g++"))
    assert _config_reads.effect(cxx, None, "darwin") == (True, (None, "clang++"))
    (tag,) = _reads("TORCH_COMPILE_CACHE_KEY_TAG", "compiler/config.py")  # Config(env_name_default=...)
    assert _config_reads.effect(tag, "x") == (True, "x") and _config_reads.effect(tag, None) == (True, "")


def _facts(env: Dict[str, str]) -> Facts:
    from inductor_doctor import probe

    return probe.gather(environ={**os.environ, **env})


@pytest.fixture(scope="module")
def key_facts() -> Facts:
    return _facts({"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1",
                   "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCH_COMPILE_CACHE_KEY_TAG": "v2"})


def test_the_key_inputs_are_read_from_the_installed_release(key_facts: Facts):
    info = key_facts.cache_key
    assert info is not None
    inputs = {i.id: i for i in info.inputs}
    torch_in = inputs["torch"]
    assert torch_in.value.startswith(torch.__version__ + ", files ")
    path, line = torch_in.source.split(":")
    text = (TORCH_DIR.parent / path).read_text().splitlines()[int(line) - 1]
    assert "torch_key()" in text, "the source named is the line of the release that reads it"
    assert {"fx-graph", "aot-autograd"} <= set(torch_in.caches)
    auto = inputs["env:TORCHINDUCTOR_MAX_AUTOTUNE"]
    assert auto.effect == "inductor config max_autotune = True"
    assert auto.default == "inductor config max_autotune = False"
    assert "env:TORCH_COMPILE_CACHE_KEY_TAG" in inputs
    # compile_threads is on Inductor's own ignore list (_cache_config_ignore_prefix): it keys nothing
    assert "env:TORCHINDUCTOR_COMPILE_THREADS" not in inputs
    off = "TORCHINDUCTOR_FX_GRAPH_CACHE=0: the local FX graph cache is off"
    assert any(s.startswith(off) for s in info.caches_off)
    assert inputs["cxx"].caches == ["cpp"] and inputs["cxx"].value.startswith("/")


def _report(hostname: str, inputs: List[Dict[str, Any]], live: bool = True) -> Dict[str, Any]:
    return {"schema": "inductor-doctor/check/v1", "tool_version": "0", "kb_version": "0", "results": [],
            "environment": {"host": {"hostname": hostname},
                            "cache_key": {"inputs": inputs, "caches_off": [], "live_read": live}}}


TORCH_IN = {"id": "torch", "label": "torch (torch_key())", "value": "2.13.0+cpu, files aaaa",
            "group": "torch", "caches": ["fx-graph", "aot-autograd"],
            "source": "torch/_inductor/codecache.py:1"}
AUTOTUNE = {"id": "env:TORCHINDUCTOR_MAX_AUTOTUNE", "label": "TORCHINDUCTOR_MAX_AUTOTUNE",
            "group": "settings", "caches": ["fx-graph", "aot-autograd"],
            "source": "torch/_inductor/config.py:514", "default": "inductor config max_autotune = False"}


def _autotune(value: str) -> Dict[str, Any]:
    return {**AUTOTUNE, "value": value, "effect": f"inductor config max_autotune = {value == '1'}"}


def _ptxas(release: str) -> Dict[str, Any]:
    return {"id": "ptxas", "label": "the ptxas Triton runs (its version, Triton's backend hash)",
            "value": release, "group": "cuda", "caches": ["triton", "autotune"],
            "source": "triton/backends/nvidia/compiler.py:560"}


def test_a_difference_only_triton_kernels_are_keyed_by_says_what_cannot_be_predicted():
    """The real pair on 4 x H100 (docs/gpu-verification.md, sixth pass): another ptxas, the FX graph
    hit, and the second host compiled nothing: torch loaded the kernels its FX graph entry bundled.
    So the line is certain only of the kernels a host compiles itself."""
    reports = [_report("node-a", [TORCH_IN, _ptxas("12.8 (bundled ptxas)")]),
               _report("node-b", [TORCH_IN, _ptxas("13.0 (TRITON_PTXAS_PATH)")])]
    (line,) = cache_lines(build_document(reports).to_dict())
    assert line == ("Compile caches: node-b will miss node-a's Triton kernels where they compile them, but "
                    "not always where an FX graph entry bundles them (torch may load those without their "
                    "key: not predictable from the reports): the ptxas Triton runs differs (13.0 "
                    "(TRITON_PTXAS_PATH) vs 12.8 (bundled ptxas); Triton kernel, autotune keys)")
    # with an FX graph input among the differences, the graph itself misses: the plain line
    reports[1]["environment"]["cache_key"]["inputs"].append(_autotune("1"))
    assert cache_lines(build_document(reports).to_dict())[0] == \
        "Compile caches: node-b will miss what node-a compiled:"


def test_two_hosts_one_variable_one_line():
    reports = [_report("node-a", [TORCH_IN]), _report("node-b", [TORCH_IN, _autotune("1")])]
    doc = build_document(reports).to_dict()
    keys = doc["cache_keys"]
    assert [d["id"] for d in keys["differences"]] == ["env:TORCHINDUCTOR_MAX_AUTOTUNE"]
    assert cache_lines(doc) == ["Compile caches: node-b will miss what node-a compiled: "
                                "TORCHINDUCTOR_MAX_AUTOTUNE differs (1 vs unset; FX graph, AOTAutograd keys)"]
    from inductor_doctor.schemas import validator

    validator("merge").validate(json.loads(json.dumps(doc)))


def test_a_variable_set_to_its_default_changes_no_key():
    keys = compare([("node-a", _report("node-a", [TORCH_IN])),
                    ("node-b", _report("node-b", [TORCH_IN, _autotune("0")]))])
    assert keys["differences"] == [] and len(keys["groups"]) == 1


def test_what_only_a_live_probe_knows_is_not_compared_with_a_report_without_one():
    triton_env = {"id": "triton-env:TRITON_DEFAULT_FP_FUSION", "label": "TRITON_DEFAULT_FP_FUSION",
                  "value": "false", "group": "settings", "caches": ["triton"]}
    keys = compare([("a", _report("a", [TORCH_IN, triton_env])), ("b", _report("b", [TORCH_IN], live=False)),
                    ("c", _report("c", [TORCH_IN])), ("d", {"environment": {}})])
    assert [d["id"] for d in keys["differences"]] == ["triton-env:TRITON_DEFAULT_FP_FUSION"]
    (diff,) = keys["differences"]
    assert {v["value"]: v["sources"] for v in diff["values"]} == {"unset": ["c"], "false": ["a"]}
    assert keys["unknown"] == [{"source": "b", "inputs": ["triton-env:TRITON_DEFAULT_FP_FUSION"]}]
    assert keys["missing"] == ["d"]


@pytest.fixture(scope="module")
def real_report(tmp_path_factory) -> Dict[str, Any]:
    """One real `check --static` report of this machine, the base of a fleet."""
    out = tmp_path_factory.mktemp("fleet") / "check.json"
    proc = run_cli(["check", "--static", "--only", "torch-missing", "--format", "json", "--output", str(out)])
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_a_fleet_of_2000_hosts_states_each_difference_in_one_line(real_report):
    """2,000 hosts: 3 with TORCHINDUCTOR_MAX_AUTOTUNE=1, 2 whose torch files differ (the same version,
    another build): two lines for the two inputs, the hosts as hostlists, the majority counted."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from bench_cache_keys import make_fleet
    finally:
        sys.path.remove(str(REPO / "bench"))
    reports = make_fleet(real_report, 2000)
    start = time.perf_counter()
    doc = build_document(reports).to_dict()
    took = time.perf_counter() - start
    lines = cache_lines(doc)
    assert lines[0] == ("Compile caches: node[0007,0042-0043,1500-1501] will miss what the other 1995 "
                        "compiled:")
    assert len(lines) == 4, lines  # and, `check --static` reports: the thread count not compared
    assert lines[3] == ("  not compared: threads on node[0000-1999] (their reports have no live probe's "
                        "answer)")
    assert lines[1].startswith("  torch: ") and "on node[0042-0043]; " in lines[1]
    assert "on the other 1998" in lines[1]
    assert lines[2] == ("  TORCHINDUCTOR_MAX_AUTOTUNE: 1 on node[0007,1500-1501]; unset on the other 1997 "
                        "(FX graph, AOTAutograd keys)")
    from inductor_doctor.render.fleet_text import merge_text

    os.environ["COLUMNS"] = "160"
    try:
        text = merge_text(doc)
    finally:
        del os.environ["COLUMNS"]
    assert sum(1 for ln in text.splitlines() if "TORCHINDUCTOR_MAX_AUTOTUNE: 1 on" in ln) == 1
    assert took < 60, took


def test_the_key_inputs_cost_little_on_a_repeated_check():
    """The second reading is served from the disk records of the files it read: under 50 ms (the bench
    measures it against a probe without it: bench/bench_cache_keys.py)."""
    from inductor_doctor import probe

    facts = probe.gather()
    args = (facts.python, facts.torch, facts.triton, facts.cuda, facts.cxx, dict(os.environ))
    cache_key.gather(*args)
    best = min(_timed(cache_key.gather, *args) for _ in range(5))
    assert best < 0.05, f"{best * 1000:.0f} ms"


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("the probes read Linux files")


@pytest.fixture(scope="module")
def built() -> Path:
    """The artifacts tests/commands/test_artifacts.py builds with this torch, once per release (it runs
    before this folder's tests)."""
    from conftest import ENVS

    out = ENVS / "artifacts" / f"{torch.__version__}-2"
    if not (out / ".ready").exists():
        pytest.skip("the test artifacts are built by tests/commands/test_artifacts.py (run it first)")
    return out


@pytest.mark.parametrize("value, says", [
    ("1", "TORCHINDUCTOR_MAX_AUTOTUNE differs (unset in the cache, 1 here)"),
    ("0", None),  # the default: the same key
])
def test_check_artifact_compares_the_environment_the_cache_recorded(built, value, says):
    """An Inductor cache's entries record the variables their compile had set (the repro header): one
    that keys differently here is named, one set to its default is not."""
    from inductor_doctor.artifact.cache_dir import read_cache_dir
    from inductor_doctor.artifact.host import host_view
    from inductor_doctor.core.artifact_facts import ArtifactFacts
    from inductor_doctor.core.model import Status
    from inductor_doctor.kb.artifact_cache_foreign import judge_artifact

    cache = str(built / "inductor-cache")
    art = ArtifactFacts(path=cache, kind="cache-dir")
    read_cache_dir(cache, art)
    assert art.compile_env is not None and "TORCHINDUCTOR_MAX_AUTOTUNE" not in art.compile_env
    out = judge_artifact(art, host_view(_facts({"TORCHINDUCTOR_MAX_AUTOTUNE": value})))
    if says:
        assert out.status is Status.LIKELY and says in out.reason, out.reason
    else:
        assert out.status is Status.OK, out.reason
