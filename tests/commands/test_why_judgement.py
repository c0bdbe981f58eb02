"""`why`'s judgement on recorded runs: fast, no compile.

The outputs in tests/data/why/runs/ are real runs of torch 2.13.0 on CPU (paths shortened): a
function compiled with `fullgraph=True` and a data-dependent `if` (`fg-*`), one calling a
`torch.compiler.disable`d function (`skip-*`), one raising its own ValueError (`raise-*`), a
lowering made wrong on purpose under `fullgraph=True` (`fglow-*`), a shape bug Dynamo meets on fake
tensors (`shape-*`), a post-grad pass made to raise (`pass-base`), each as it is (`-base`) and with
`TORCH_COMPILE_DISABLE=1` (`-disabled`), and the compiler bisector's own output on the lowering
(`bisector-lowering`). The real runs of the same programs are tests/commands/test_why_handoff.py's
(`-m heavy`).

The class under test (issue 38, item 1): a run counts only by its failure signature, same as the
baseline, different, or passed; a run that failed differently is shown and decides nothing, and the
answer names the layer that failed. Before, with torch.compile disabled failing *differently*
(torch 2.13 refuses `fullgraph=True` when nothing was compiled), `why` said "the error is in the
program".
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import Attempt
from inductor_doctor.why.conclude import Kind, conclude
from inductor_doctor.why.runs import NOT_RUN, OTHER, PASSED, SAME, Tried, status_of
from inductor_doctor.why.signature import read

RUNS = Path(__file__).resolve().parents[1] / "data" / "why" / "runs"


def output(name: str) -> bytes:
    return (RUNS / f"{name}.txt").read_bytes()


def attempt(name: Optional[str], code: int = 1, calls: Optional[int] = None) -> Attempt:
    """A recorded run: its output, or a pass (None)."""
    if name is None:
        return Attempt(0, 10.0, b"42.0\n", 5, calls)
    data = output(name)
    return Attempt(code, 10.0, data, len(data), calls)


def tried(base: Attempt, runs: Dict[str, Optional[str]]) -> List[Tried]:
    """The plan's variations, each given a recorded run (a name of tests/data/why/runs, None for a pass)
    and judged against the baseline as `why` judges it; the others not run."""
    plan = [V.fresh_caches([]), V.compile_disabled(), *V.backends()]
    out = []
    for v in plan:
        t = Tried(v)
        if v.key in runs:
            t.attempt = attempt(runs[v.key], calls=1 if v.kind == V.LAYER else None)
            t.status = status_of(t.attempt, base.signature(), ())
        else:
            t.attempt, t.status = Attempt(None, 0.0, b"", 0, error="not needed"), NOT_RUN
        out.append(t)
    return out


# --- the signature -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, exc_type, stage", [
    ("fg-base", "torch._dynamo.exc.Unsupported", "graph_break"),
    ("skip-base", "torch._dynamo.exc.Unsupported", "graph_break"),
    ("fg-disabled", "RuntimeError", None),  # torch.compile's refusal of fullgraph=True, not the program's
    ("shape-base", "torch._dynamo.exc.TorchRuntimeError", "dynamo"),
    ("shape-disabled", "RuntimeError", None),
    ("fglow-base", "torch._inductor.exc.InductorError", "lowering"),
    ("pass-base", "torch._inductor.exc.InductorError", "passes"),
])
def test_the_signature_is_the_final_tracebacks_exception_and_its_layer(name, exc_type, stage):
    sig = read(output(name), 1)
    assert sig.exc_type == exc_type and sig.stage == stage, sig
    assert not sig.line.startswith("Set TORCHDYNAMO_VERBOSE")  # the last line is not the failure


def test_signatures_compare_by_failure_not_by_wording():
    fg, refusal = read(output("fg-base"), 1), read(output("fg-disabled"), 1)
    shape, program = read(output("shape-base"), 1), read(output("shape-disabled"), 1)
    assert not fg.same_as(refusal)
    # Dynamo's report of the program's own error on fake tensors is that error (worded by other kernels)
    assert shape.wrapped == "RuntimeError" and shape.same_as(program)
    # ...but torch.compile's own RuntimeError (raised in Dynamo's frames) is not the program's
    assert not shape.same_as(refusal)
    assert read(b"", -11).line == "killed by SIGSEGV"
    assert read(b"inductor_doctor.OutputMismatch: output differs from eager\n", 1).stage == "accuracy"


# --- a run that fails differently decides nothing: the class, three cases and the control -------------


def test_a_graph_break_under_fullgraph_is_dynamos_not_the_programs():
    """The issue's case: TORCH_COMPILE_DISABLE=1 fails with *another* error; the answer is Dynamo's
    tracing (a graph break under fullgraph=True), with Dynamo's own hint to use torch.cond."""
    base = attempt("fg-base")
    runs = tried(base, {"fresh-caches": "fg-base", "compile-disabled": "fg-disabled",
                        "backend:eager": "fg-base", "backend:aot_eager": "fg-base"})
    assert [t.status for t in runs] == [SAME, OTHER, SAME, SAME]
    c = conclude(base, runs, ())
    assert c.kind is Kind.LAYER and c.layer == "dynamo" and c.stage == "graph_break", c
    assert "the error is in the program" not in c.sentence
    assert "fullgraph=True" in c.sentence and "decides nothing" in c.sentence
    assert any("torch.cond" in h for h in c.hints)


def test_another_graph_break_kind_a_disabled_function_under_fullgraph():
    base = attempt("skip-base")
    c = conclude(base, tried(base, {"fresh-caches": "skip-base", "compile-disabled": "skip-disabled",
                                    "backend:eager": "skip-base", "backend:aot_eager": "skip-base"}), ())
    assert c.kind is Kind.LAYER and c.layer == "dynamo" and c.stage == "graph_break", c
    assert c.hints == ("Remove the `torch.compiler.disable` call",)


def test_another_layer_a_lowering_under_fullgraph_is_inductors():
    """torch.compile disabled fails differently (the fullgraph refusal) and the step-down passes down
    to aot_eager: the failure is Inductor's lowering, as the traceback says."""
    base = attempt("fglow-base")
    c = conclude(base, tried(base, {"fresh-caches": "fglow-base", "compile-disabled": "fglow-disabled",
                                    "backend:eager": None, "backend:aot_eager": None}), ())
    assert c.kind is Kind.LAYER and c.layer == "inductor" and c.stage == "lowering", c
    assert "Inductor's lowering" in c.sentence and "decides nothing" in c.sentence


def test_the_programs_own_raise_under_fullgraph_is_the_programs():
    """Under fullgraph=True the program's own `raise ValueError` is Dynamo's "Observed exception" graph
    break: the same failure as the ValueError torch.compile disabled raises; and where that run could not
    tell (torch 2.13 refuses fullgraph=True when nothing was compiled, as for a raise after the first
    call), Dynamo alone failing the same way says it."""
    base = attempt("raise-base")
    runs = tried(base, {"fresh-caches": "raise-base", "compile-disabled": "raise-disabled",
                        "backend:eager": "raise-base", "backend:aot_eager": "raise-base"})
    assert runs[1].status == SAME
    c = conclude(base, runs, ())
    assert c.kind is Kind.PROGRAM and c.variation == "compile-disabled", c
    assert "ValueError('scale must be positive, got -1.0')" in c.sentence
    c = conclude(base, tried(base, {"fresh-caches": "raise-base", "compile-disabled": "fg-disabled",
                                    "backend:eager": "raise-base", "backend:aot_eager": "raise-base"}), ())
    assert c.kind is Kind.PROGRAM and c.variation == "backend:eager", c
    assert "ValueError('scale must be positive, got -1.0')" in c.sentence and "decides nothing" in c.sentence


def test_the_control_a_failure_the_same_way_without_compile_is_the_programs():
    base = attempt("shape-base")
    runs = tried(base, {"fresh-caches": "shape-base", "compile-disabled": "shape-disabled"})
    assert runs[1].status == SAME
    c = conclude(base, runs, ())
    assert c.kind is Kind.PROGRAM and c.variation == "compile-disabled", c


def test_an_eager_backend_that_fails_differently_names_no_layer():
    base = attempt("pass-base")
    c = conclude(base, tried(base, {"fresh-caches": "pass-base", "compile-disabled": None,
                                    "backend:eager": "fg-disabled", "backend:aot_eager": "fg-disabled"}), ())
    assert c.kind is Kind.NONE, c


# --- each run said once, the workaround named once ---------------------------------------------------


def _document(conclusion, runs, base):
    from inductor_doctor.commands.why import WhyDocument

    return WhyDocument(["python3", "repro.py"], base, {"matched": False, "id": None, "confidence": None,
                                                       "assessment": "no known issue matches this failure"},
                       runs, conclusion, 2, 120.0, 30.0)


@pytest.mark.parametrize("case", ["environment", "layer"])
def test_every_run_is_listed_once_and_the_workaround_named_once(case):
    from inductor_doctor.render import render

    base = attempt("pass-base")
    plan = [V.fresh_caches(["/home/user/.cache"]),
            *V.issue_workarounds("openmp-headers-missing", [{"CXX": "g++"}], ["export CXX=g++"]),
            *V.compilers({"CXX": "clang++", "PATH": "/usr/bin"})[:1], V.compile_disabled(), *V.backends()]
    runs = []
    for v in plan:
        t = Tried(v, attempt("pass-base"), SAME)
        if case == "environment" and v.key.startswith("issue:"):  # its label is its command
            t.attempt, t.status = attempt(None), PASSED
        if case == "layer" and v.kind in (V.CONTROL, V.LAYER):
            t.attempt, t.status = attempt(None, calls=1), PASSED
        runs.append(t)
    c = conclude(base, runs, ())
    text = render(_document(c, runs, base), "text")
    assert c.kind.value == case, c
    lines = text.splitlines()
    for t in runs:  # one row each, and no run told again in words ("...: passes (exit 0 in 10.0s)")
        rows = sum(line.startswith("  " + t.variation.label) for line in lines)
        assert rows == 1, (t.variation.label, text)
    assert "passes (exit 0" not in text and ": fails the same way" not in text
    if case == "environment":  # the sentence names it once; its run is the table's row
        words = [line for line in lines if not line.startswith("  ")]
        assert "\n".join(words).count(c.workaround) == 1, text
    json_doc = _document(c, runs, base).to_dict()
    from inductor_doctor.schemas import validate

    validate("why", json.loads(json.dumps(json_doc)))


# --- the hand-off to the compiler bisector, on its recorded output ----------------------------------------


def test_the_bisectors_answer_is_read_and_said_with_the_line_that_reproduces_it(tmp_path):
    from inductor_doctor.why import bisect as B

    text = output("bisector-lowering").decode()
    line = text.strip().splitlines()[-1]
    fields = B.parse_result(line[len("Bisection complete: "):])
    assert fields == {"backend": "inductor", "subsystem": "lowerings", "bisect_number": 0,
                      "debug_info": "sin"}
    found = B.Bisection(True, "inductor", "lowerings", 0, "sin", duration_s=190.0,
                        steps=[{"status": "passed"}] * 15 + [{"status": "fails differently",
                                                              "error_line": "RuntimeError: other"}])
    have = B.Offer("python3", "2.13.0", "/x/torch", True, True, True, True)
    repro = Tried(V.Variation("bisect:repro", "TORCH_BISECT_...", V.BISECT),
                  Attempt(1, 9.0, b"", 0, extra={"ops": "0\tsin\taten.sin.default\n"}), SAME)
    said = B.sentence(found, have, [repro], ["python3", "repro.py"])
    assert said["op"] == "aten.sin.default" and said["confirmed"]
    assert said["repro_line"] == ("TORCH_BISECT_BACKEND=inductor TORCH_BISECT_SUBSYSTEM=lowerings "
                                  "TORCH_BISECT_MAX=0 python3 repro.py")
    assert "Inductor's lowerings (backend inductor): the first failing application is #0, aten.sin.default " \
           "(node sin)" in said["sentence"]
    assert "1 of its runs failed differently" in said["sentence"]
    passes = B.Bisection(True, "inductor", "post_grad_passes", 3, "reorder_for_locality")
    assert B.workaround_of(passes, have) == "export TORCHINDUCTOR_DISABLED_PASSES=REORDER_FOR_LOCALITY"
    assert B.op_name("<OpOverload(op='aten.silu', overload='default')>") == "aten.silu.default"


def test_what_the_installed_torch_offers_is_read_from_its_files():
    from inductor_doctor.why import bisect as B

    # this interpreter's torch (2.13: the bisector, its run mode)
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed for this interpreter")
    have = B.offer(sys.executable, dict(os.environ))
    assert have.has_bisector and have.has_run and have.missing() is None, have
    assert have.config_env("layout_optimization") == "TORCHINDUCTOR_LAYOUT_OPTIMIZATION"
    assert have.config_env("fallback_random") is None  # a config with no environment variable
    config = B.Bisection(True, "inductor", "inductor_layout_optimization", 0,
                         config="inductor.layout_optimization=False")
    assert B.workaround_of(config, have) == "export TORCHINDUCTOR_LAYOUT_OPTIMIZATION=0"


@pytest.mark.envs
def test_a_torch_without_the_run_mode_is_said_so():
    from conftest import venv_python

    from inductor_doctor.why import bisect as B

    have = B.offer(venv_python("cache-torch-2.9.0"), dict(os.environ))
    assert have.version == "2.9.0" and have.has_bisector and not have.has_run
    assert "has no `run` mode" in have.missing()


# --- the step wrapper: a compared run, a step past its time ---------------------------------------------


STEP = Path(__file__).resolve().parents[2] / "inductor_doctor" / "target" / "why_step.py"


def _step(tmp_path: Path, body: str, *opts: str) -> subprocess.CompletedProcess:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(STEP), *opts, "--", sys.executable, str(prog)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.heavy  # four torch imports: 10 s on an idle 2-core machine, 40 s on a loaded one
def test_the_step_wrapper_compares_with_eager(tmp_path):
    torch = pytest.importorskip("torch")
    ref = tmp_path / "ref.pt"
    torch.save((torch.ones(4), {"n": 2.0}), ref)
    save = """
        import os, torch
        torch.save((torch.ones(4) * {k}, {{"n": 2.0}}), os.environ["INDUCTOR_DOCTOR_WHY_OUTPUT"])
    """
    opts = ("--reference", str(ref), "--rtol", "1e-3", "--atol", "1e-3")
    assert _step(tmp_path, save.format(k="1.0005"), *opts).returncode == 0
    wrong = _step(tmp_path, save.format(k="1.5"), *opts)
    assert wrong.returncode == 1
    assert ("inductor_doctor.OutputMismatch: output[0] differs from eager beyond rtol=0.001, atol=0.001: "
            "4 of 4") in wrong.stderr
    assert read(wrong.stderr.encode(), 1).stage == "accuracy"
    assert _step(tmp_path, "pass", *opts).returncode == 3  # saved nothing


def test_the_step_wrapper_kills_a_step_past_its_time_whole(tmp_path):
    log = tmp_path / "steps"
    marker = tmp_path / "child.pid"
    hang = _step(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        open({str(marker)!r}, "w").write(str(child.pid))
        time.sleep(300)
    """, "--log", str(log), "--timeout", "2")
    assert hang.returncode == 124
    facts = json.loads((log / "step-000.json").read_text())
    assert facts["exit_code"] == 124 and facts["duration_s"] < 60
    time.sleep(0.5)
    try:  # the step's own child is gone too (or a zombie waiting for init)
        state = Path(f"/proc/{marker.read_text()}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z"), state


def test_the_minified_reproducer_is_kept_whole_outside_the_scratch_directory(tmp_path):
    """torch writes the scratch caches and the saved inputs' directory into the reproducer: the caches'
    settings go, the inputs are copied beside it and the file names them there."""
    from inductor_doctor.why.minify import keep

    root = tmp_path / "inductor-doctor-why-x"
    saved = root / "minify-0" / "debug" / "run" / "minifier" / "checkpoints"
    (saved / "storages").mkdir(parents=True)
    (saved / "storages" / "d371").write_bytes(b"\0" * 32)
    made = root / "repro.py"
    made.write_text(textwrap.dedent(f"""\
        import os
        os.environ['TORCHINDUCTOR_CACHE_DIR'] = '{root}/minify-0/inductor-cache'
        os.environ['_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR'] = '1401'
        if __name__ == '__main__':
            with torch.no_grad():
                run_repro(mod, load_args, accuracy=False, command='run', save_dir='{saved}', check_str=None)
    """))
    kept = Path(keep(str(made), str(root)))
    text = kept.read_text()
    assert str(root) not in text and "TORCHINDUCTOR_CACHE_DIR" not in text
    assert f"save_dir='{kept.parent / 'checkpoints'}'" in text and "PYOBJECT_TENSOR_DATA_PTR" in text
    assert (kept.parent / "checkpoints" / "storages" / "d371").stat().st_size == 32
    compile(text, str(kept), "exec")
