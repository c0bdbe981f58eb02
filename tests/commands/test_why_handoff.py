"""`why` on real failing torch programs, down to the pass and the op: minutes of real compiles (`-m heavy`).

Each program runs on a torch whose Inductor is wrong in one place on purpose
(tests/data/why/broken_torch/sitecustomize.py, on PYTHONPATH: every process of the run gets it, the
compiler bisector's steps and the minifier's included, as a torch with that bug would): a lowering
that raises, a post-grad pass that raises, a decomposition that computes a wrong value (`why
--compare`). `why` must name the same backend, subsystem, application and op as the compiler bisector
run by hand (`python -m torch._inductor.compiler_bisector run python3 PROGRAM`, the results in
BY_HAND), prove the `TORCH_BISECT_*` line and the workaround it gives, and leave nothing in the
user's caches or working directory. Two more programs are issue 38's class (a run that fails
differently decides nothing), and one runs on torch 2.9.0, whose bisector has no `run` mode.
Each program is run once (a module-scoped cache) and shared by its assertions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Tuple

import pytest

pytestmark = pytest.mark.heavy

REPO = Path(__file__).resolve().parents[2]
BROKEN = REPO / "tests" / "data" / "why" / "broken_torch"

SIN_FULLGRAPH = """
import torch


@torch.compile(fullgraph=True)
def f(x):
    return x.sin() + 1


print(f(torch.randn(8)).sum().item())
"""
SIN = SIN_FULLGRAPH.replace("(fullgraph=True)", "")
SILU = """
import os

import torch


@torch.compile
def f(x):
    return torch.nn.functional.silu(x) * 2


torch.manual_seed(0)
out = f(torch.randn(64))
if os.environ.get("INDUCTOR_DOCTOR_WHY_OUTPUT"):
    torch.save(out, os.environ["INDUCTOR_DOCTOR_WHY_OUTPUT"])
print(out.sum().item())
"""
DATA_DEPENDENT_IF = """
import torch


@torch.compile(fullgraph=True)
def f(x):
    if x.sum() > 0:
        return x.sin()
    return x.cos()


print(f(torch.randn(8)))
"""
DISABLED_CALL = """
import torch


@torch.compiler.disable
def log_stats(x):
    return x.mean()


@torch.compile(fullgraph=True)
def f(x):
    log_stats(x)
    return x.sin() + 1


print(f(torch.randn(8)))
"""

#: name: (program, WHY_TEST_BREAK, why's options, the interpreter's cached venv or None)
CASES = {
    "lowering": (SIN_FULLGRAPH, "lowering", (), None),
    "pass": (SIN, "pass", (), None),
    "decomposition": (SILU, "decomposition", ("--compare",), None),
    "graph-break": (DATA_DEPENDENT_IF, "", (), None),
    "disabled-call": (DISABLED_CALL, "", (), None),
    "torch-2.9.0": (SIN, "lowering", (), "cache-torch-2.9.0"),
}
#: The compiler bisector run by hand on the same programs (torch 2.13.0+cpu, in a scratch
#: TORCHINDUCTOR_CACHE_DIR), its `Bisection complete: BisectionResult(...)` line; the accuracy case
#: with a script that compares torch.compile(f)(x) with f(x) (torch.allclose, 1e-3) and exits 1.
BY_HAND = {
    "lowering": {"backend": "inductor", "subsystem": "lowerings", "number": 0, "op": "aten.sin.default"},
    "pass": {"backend": "inductor", "subsystem": "post_grad_passes", "number": 0,
             "op": "reorder_for_locality"},
    "decomposition": {"backend": "aot_eager_decomp_partition", "subsystem": "decomposition", "number": 0,
                      "op": "aten.silu.default"},
}
_done: Dict[str, Tuple[dict, Path]] = {}


def _torch_or_skip() -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed for this interpreter")


def _snapshot(path: Path) -> Dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}


def why_on(name: str, factory) -> Tuple[dict, Path]:
    """`why` on the case's program, once: its JSON document, and the case's directory (`work/` is the
    user's tree, `user-inductor-cache/` the user's cache, `tmp/` the system's temporary directory)."""
    if name in _done:
        return _done[name]
    text, broken, options, venv = CASES[name]
    python = sys.executable
    if venv:
        from conftest import venv_python

        python = venv_python(venv)
    else:
        _torch_or_skip()
    root = factory.mktemp(name)
    work, cache, tmp = root / "work", root / "user-inductor-cache", root / "tmp"
    for d in (work, cache / "ab", tmp):
        d.mkdir(parents=True)
    (cache / "ab" / "mine.py").write_text("# the user's own cache entry\n")
    (work / "repro.py").write_text(textwrap.dedent(text))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BROKEN), str(REPO)]), WHY_TEST_BREAK=broken,
               TORCHINDUCTOR_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(root / "user-triton-cache"),
               TMPDIR=str(tmp))
    before = _snapshot(cache)
    proc = subprocess.run([sys.executable, "-m", "inductor_doctor", "why", "--jobs", "2", "--format", "json",
                           "--output", str(root / "why.json"), *options, "--", python, "repro.py"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=3600)
    assert (root / "why.json").exists(), proc.stderr[-3000:]
    doc = json.loads((root / "why.json").read_text())
    from inductor_doctor.schemas import validate

    validate("why", doc)
    doc["exit_code"] = proc.returncode
    doc["stderr"] = proc.stderr
    doc["cache_before"], doc["cache_after"] = before, _snapshot(cache)
    _done[name] = (doc, root)
    return doc, root


def _left_nothing(doc: dict, root: Path) -> None:
    """Nothing in the user's tree but the program, no bisector state in the user's cache and the user's
    entry kept, no scratch directory of the doctor's left; only the minified reproducer, where named."""
    assert sorted(p.name for p in (root / "work").iterdir()) == ["repro.py"]
    assert not (root / "user-inductor-cache" / "bisect").exists()
    assert doc["cache_after"].get("ab/mine.py") == doc["cache_before"]["ab/mine.py"]
    left = sorted(p.name for p in (root / "tmp").iterdir())
    assert not [n for n in left if n.startswith("inductor-doctor-why-")], left
    repro = doc["conclusion"].get("repro")
    kept = [Path(repro).parent.name] if repro else []
    assert [n for n in left if n.startswith("inductor-doctor-repro-")] == kept


# --- the hand-off: each program named to the op, as by hand ------------------------------------------------


@pytest.mark.parametrize("name", ["lowering", "pass", "decomposition"])
def test_why_names_the_subsystem_and_the_op_as_the_bisector_by_hand(name, tmp_path_factory):
    doc, root = why_on(name, tmp_path_factory)
    c = doc["conclusion"]
    assert c["kind"] == "layer" and c["layer"] == "inductor", c
    b = c["bisect"]
    assert b["available"] and b["ran"], b
    assert {k: b[k] for k in ("backend", "subsystem", "number", "op")} == BY_HAND[name], b
    assert b["confirmed"], b  # the TORCH_BISECT_* line fails the same way here
    line = (f"TORCH_BISECT_BACKEND={b['backend']} TORCH_BISECT_SUBSYSTEM={b['subsystem']} "
            f"TORCH_BISECT_MAX={b['number']}")
    assert b["repro_line"].startswith(line) and f"`{b['repro_line']}`" in c["sentence"]
    assert f"#{b['number']}, {b['op']}" in c["sentence"]
    _left_nothing(doc, root)


def test_a_pass_gets_the_flag_that_works_around_it_proved(tmp_path_factory):
    doc, _ = why_on("pass", tmp_path_factory)
    b = doc["conclusion"]["bisect"]
    assert b["workaround"] == "export TORCHINDUCTOR_DISABLED_PASSES=REORDER_FOR_LOCALITY"
    assert b["workaround_proved"]
    rows = {v["key"]: v for v in doc["variations"]}
    assert rows["bisect:workaround"]["status"] == "passed"
    assert rows["bisect:repro"]["status"] == "fails the same way"


def test_a_wrong_result_is_found_by_comparing_with_eager(tmp_path_factory):
    doc, _ = why_on("decomposition", tmp_path_factory)
    assert doc["compare"]["reference"].startswith("torch.compile disabled")
    assert doc["baseline"]["exit_code"] == 1 and doc["baseline"]["stage"] == "accuracy"
    assert doc["baseline"]["error_line"].startswith(
        "inductor_doctor.OutputMismatch: output differs from eager")
    rows = {v["key"]: v for v in doc["variations"]}
    assert rows["backend:aot_eager"]["status"] == "passed"  # no decompositions there
    assert "whose result differs from eager's" in doc["conclusion"]["sentence"]


def test_the_lowering_gets_a_minified_reproducer_outside_the_users_tree(tmp_path_factory):
    doc, root = why_on("lowering", tmp_path_factory)
    repro = doc["conclusion"]["repro"]
    assert repro and Path(repro).is_file() and str(root / "tmp") in repro, doc["conclusion"]["notes"]
    text = Path(repro).read_text()
    assert "inductor-doctor-why-" not in text  # the scratch caches it was made with are not in it
    assert any(repro in note for note in doc["conclusion"]["notes"])
    # it reproduces the failure, on the same (broken) torch, from anywhere
    env = dict(os.environ, PYTHONPATH=str(BROKEN), WHY_TEST_BREAK="lowering",
               TORCHINDUCTOR_CACHE_DIR=str(root / "repro-cache"))
    ran = subprocess.run([sys.executable, repro], cwd=root, env=env, capture_output=True, text=True,
                         timeout=900)
    assert ran.returncode != 0, ran.stdout[-2000:]
    assert "a lowering made wrong on purpose" in ran.stdout + ran.stderr, ran.stderr[-2000:]


# --- issue 38: a run that fails differently decides nothing, the layer is named ----------------------------


@pytest.mark.parametrize("name, hint", [("graph-break", "torch.cond"),
                                        ("disabled-call", "torch.compiler.disable")])
def test_a_graph_break_under_fullgraph_is_dynamos_not_the_programs(name, hint, tmp_path_factory):
    doc, root = why_on(name, tmp_path_factory)
    c = doc["conclusion"]
    rows = {v["key"]: v for v in doc["variations"]}
    assert rows["compile-disabled"]["status"] == "fails differently"
    assert "fullgraph=True found no compiled frames" in rows["compile-disabled"]["run"]["error_line"]
    assert c["kind"] == "layer" and c["layer"] == "dynamo" and c["stage"] == "graph_break", c
    assert "decides nothing" in c["sentence"] and "the error is in the program" not in c["sentence"]
    assert any(hint in h for h in c["hints"]), c["hints"]
    assert c["bisect"] is None  # not Inductor's: no hand-off
    _left_nothing(doc, root)


def test_another_layer_a_lowering_under_fullgraph_is_inductors(tmp_path_factory):
    doc, _ = why_on("lowering", tmp_path_factory)
    rows = {v["key"]: v for v in doc["variations"]}
    assert rows["compile-disabled"]["status"] == "fails differently"
    assert doc["conclusion"]["stage"] == "lowering" and "Inductor's lowering" in doc["conclusion"]["sentence"]


# --- a torch whose bisector cannot run a command: said, and the answer stays ------------------------------


@pytest.mark.envs
def test_a_torch_without_the_run_mode_stops_at_the_layer(tmp_path_factory):
    doc, root = why_on("torch-2.9.0", tmp_path_factory)
    c = doc["conclusion"]
    assert c["kind"] == "layer" and c["layer"] == "inductor", c
    assert c["bisect"]["available"] is False and c["bisect"]["torch"] == "2.9.0"
    assert any("has no `run` mode" in n for n in c["notes"]), c["notes"]
    assert not [v for v in doc["variations"] if v["kind"] == "bisect"]
    _left_nothing(doc, root)
