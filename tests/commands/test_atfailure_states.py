"""`why`, `run` and the hook on real failing torch programs, made from the project's broken states.

Each state is real: clang++-16 installed without libomp (`omp.h` not found), no C++ compiler on
PATH, a real Inductor cache whose compiled objects were cut short, plus failures the doctor does
not know (a Python error inside a compiled function, a shape bug, a lowering Inductor gets wrong).
The diagnosis must name the right cause, or say plainly what it is not. Slow (each run of a
torch.compile program compiles for real), so few.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import run_dir, which_or_skip

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
DOCTOR = [sys.executable, "-m", "inductor_doctor"]
COMPILED = """
import torch

@torch.compile
def f(x):
    return (x.sin() + 1).cos()

print(f(torch.randn(8)).sum().item())
"""
PYTHON_ERROR = """
import torch

@torch.compile
def f(x, scale):
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    return x * scale

print(f(torch.randn(8), -1.0))
"""
SHAPE_BUG = """
import torch

@torch.compile
def f(x, w):
    return torch.relu(x @ w)

print(f(torch.randn(8, 4), torch.randn(5, 3)))
"""
LOWERING_BUG = """
import torch
from torch._inductor import lowering

def wrong(*args, **kwargs):
    raise NotImplementedError("a lowering Inductor gets wrong")

lowering.lowerings[torch.ops.aten.sin.default] = wrong

@torch.compile
def f(x):
    return x.sin() + 1

print(f(torch.randn(8)).sum().item())
"""


def _torch_or_skip() -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed for this interpreter")


def _program(tmp_path: Path, text: str) -> str:
    path = tmp_path / "repro.py"
    path.write_text(textwrap.dedent(text))
    return str(path)


def _env(tmp_path: Path, **extra: str) -> dict:
    env = dict(ENV, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "user-inductor-cache"),
               TRITON_CACHE_DIR=str(tmp_path / "user-triton-cache"),
               INDUCTOR_DOCTOR_CACHE_DIR=str(run_dir("af")))
    env.update(extra)
    return env


def _why(tmp_path: Path, prog: str, env: dict, *args: str) -> dict:
    proc = subprocess.run([*DOCTOR, "why", "--jobs", "2", "--timeout", "500", "--format", "json",
                           "--output", str(tmp_path / "why.json"), *args, "--", sys.executable, prog],
                          env=env, capture_output=True, text=True, timeout=1800)
    doc = json.loads((tmp_path / "why.json").read_text())
    from inductor_doctor.schemas import validate

    validate("why", doc)
    doc["exit_code"] = proc.returncode
    return doc


def _compilerless_path(tmp_path: Path) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("python3", "python"):
        (bindir / name).symlink_to(os.path.realpath(sys.executable))
    return str(bindir)


def _clang_without_omp() -> None:
    which_or_skip("clang++-16")
    if Path("/usr/lib/llvm-16/lib/clang/16/include/omp.h").exists() or Path("/usr/include/omp.h").exists():
        pytest.skip("libomp headers are installed here: clang-16 has OpenMP")


# --- environment causes: why names them and proves the workaround ---------------------------------


def test_why_clang_without_openmp(tmp_path):
    _torch_or_skip()
    _clang_without_omp()
    doc = _why(tmp_path, _program(tmp_path, COMPILED), _env(tmp_path, CXX="clang++-16"))
    c = doc["conclusion"]
    assert doc["exit_code"] == 0 and doc["triage"]["id"] == "openmp-headers-missing"
    assert c["kind"] == "environment" and "g++" in c["workaround"], c
    assert "passes" in c["sentence"]


def test_why_no_compiler_on_path(tmp_path):
    _torch_or_skip()
    doc = _why(tmp_path, _program(tmp_path, COMPILED), _env(tmp_path, PATH=_compilerless_path(tmp_path)))
    c = doc["conclusion"]
    assert doc["triage"]["id"] == "cxx-compiler-missing"
    assert c["kind"] == "environment" and c["variation"] == "path-system-dirs", c
    assert c["workaround"] == 'export PATH="$PATH:/usr/bin"'  # g++ alone needs as, ld, openssl from there


def test_why_truncated_objects_in_a_real_inductor_cache(tmp_path):
    _torch_or_skip()
    prog = _program(tmp_path, COMPILED)
    env = _env(tmp_path)
    first = subprocess.run([sys.executable, prog], env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-2000:]
    cache = Path(env["TORCHINDUCTOR_CACHE_DIR"])
    objects = list(cache.rglob("*.so"))
    assert objects
    for so in objects:  # a write cut short, as a full disk or a killed compile leaves it
        with open(so, "r+b") as fh:
            fh.truncate(40)
    doc = _why(tmp_path, prog, env)
    c = doc["conclusion"]
    assert doc["baseline"]["exit_code"] not in (0, None), "the cut cache did not break the program"
    assert c["kind"] == "environment" and c["variation"] == "fresh-caches", c
    assert c["workaround"].startswith(f"rm -rf {cache}")


# --- failures the doctor does not know -------------------------------------------------------------


@pytest.mark.parametrize("text", [PYTHON_ERROR, SHAPE_BUG], ids=["python-error", "shape-bug"])
def test_why_a_bug_of_the_program(tmp_path, text):
    _torch_or_skip()
    doc = _why(tmp_path, _program(tmp_path, text), _env(tmp_path))
    c = doc["conclusion"]
    assert doc["triage"]["matched"] is False
    assert c["kind"] == "program", c
    assert "fails with torch.compile disabled too" in c["sentence"]


def test_why_a_lowering_inductor_gets_wrong(tmp_path):
    _torch_or_skip()
    doc = _why(tmp_path, _program(tmp_path, LOWERING_BUG), _env(tmp_path))
    c = doc["conclusion"]
    assert c["kind"] == "layer" and c["layer"] == "inductor", c
    by = {v["key"]: v for v in doc["variations"]}
    assert by["backend:aot_eager"]["status"] == "passed" and by["compile-disabled"]["status"] == "passed"
    assert by["backend:aot_eager"]["run"]["compile_calls"] == 1  # the step-down really wrapped the call


# --- run and the hook on the real failure -------------------------------------------------------


def test_run_clang_without_openmp_triages_and_checks_here(tmp_path):
    _torch_or_skip()
    _clang_without_omp()
    prog = _program(tmp_path, COMPILED)
    proc = subprocess.run([*DOCTOR, "run", "--timeout", "400", "--", sys.executable, prog],
                          env=_env(tmp_path, CXX="clang++-16"), capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 1 and proc.stdout == ""
    err = proc.stderr
    ours = err.index("inductor-doctor: the command exited with status 1")
    assert err.index("'omp.h' file not found") < ours
    assert "this is openmp-headers-missing (exact match)" in err
    assert "checked here now: openmp-headers-missing on cpu: affected" in err
    assert "$ export CXX=g++" in err


def test_hook_on_the_real_openmp_failure(tmp_path):
    _torch_or_skip()
    _clang_without_omp()
    prog = _program(tmp_path, "import inductor_doctor.hook\ninductor_doctor.hook.install()\n" + COMPILED)
    proc = subprocess.run([sys.executable, prog], env=_env(tmp_path, CXX="clang++-16"), capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 1
    tail = proc.stderr[proc.stderr.index("torch._inductor.exc.InductorError"):]
    assert "inductor-doctor: this is openmp-headers-missing (exact match)" in tail
    assert "export CXX=g++" in tail
