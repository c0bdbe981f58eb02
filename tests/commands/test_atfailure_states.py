"""`why`, `run` and the hook on real failing torch programs, made from the project's broken states.

Each state is real: clang++-16 installed without libomp (`omp.h` not found), no C++ compiler on
PATH, a real Inductor cache whose compiled objects were cut short, the seed reproducers on the
pre-fix code that tests/verdicts/test_canaries_can_fail.py puts back (torch's alignment logic of
April 2025, a g++ that rejects Inductor's C++), a read-only /dev/shm, plus failures the doctor does
not know (a Python error inside a compiled function, a shape bug, a lowering Inductor gets wrong).
`why --versions` installs other torch releases for real (marked `envs`).
The diagnosis must name the right cause, or say plainly what it is not. Slow (each run of a
torch.compile program compiles for real), so few.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
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


@pytest.mark.heavy
def test_why_clang_without_openmp(tmp_path):
    _torch_or_skip()
    _clang_without_omp()
    doc = _why(tmp_path, _program(tmp_path, COMPILED), _env(tmp_path, CXX="clang++-16"))
    c = doc["conclusion"]
    assert doc["exit_code"] == 0 and doc["triage"]["id"] == "openmp-headers-missing"
    assert c["kind"] == "environment" and "g++" in c["workaround"], c
    assert "passes" in c["sentence"]
    # a failure in Inductor's C++ compile whose cause is the environment: that answer, no bisector
    assert c["bisect"] is None and not [v for v in doc["variations"] if v["kind"] == "bisect"]
    assert c["sentence"].count(c["workaround"]) == 1


@pytest.mark.heavy
def test_why_no_compiler_on_path(tmp_path):
    _torch_or_skip()
    doc = _why(tmp_path, _program(tmp_path, COMPILED), _env(tmp_path, PATH=_compilerless_path(tmp_path)))
    c = doc["conclusion"]
    assert doc["triage"]["id"] == "cxx-compiler-missing"
    assert c["kind"] == "environment" and c["variation"] == "path-system-dirs", c
    assert c["workaround"] == 'export PATH="$PATH:/usr/bin"'  # g++ alone needs as, ld, openssl from there
    assert c["bisect"] is None


@pytest.mark.heavy
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
    assert "fails the same way with torch.compile disabled" in c["sentence"]


@pytest.mark.heavy
def test_why_a_lowering_inductor_gets_wrong(tmp_path):
    """The step-down for real; the hand-off to the compiler bisector that follows is
    tests/commands/test_why_handoff.py's (`-m heavy`)."""
    _torch_or_skip()
    doc = _why(tmp_path, _program(tmp_path, LOWERING_BUG), _env(tmp_path), "--no-bisect")
    c = doc["conclusion"]
    assert c["kind"] == "layer" and c["layer"] == "inductor" and c["stage"] == "lowering", c
    assert c["bisect"] is None
    assert c["notes"] == ["The compiler bisector and the minifier were not run (--no-bisect)."]
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


# --- the seed reproducers on the pre-fix code ------------------------------------------------------

#: Puts tests/verdicts/test_canaries_can_fail.py's PRE_FIX_ALIGNMENT back once the program imports
#: torch, as a broken torch would be; the doctor's own process (which never imports torch) and its
#: PYTHONPATH are left alone.
AFTER_TORCH = """
import importlib.abc, importlib.util, os, sys
PRE_FIX = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pre_fix.py")).read()
class _AfterTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        real = spec.loader.exec_module
        def exec_module(module):
            real(module)
            exec(compile(PRE_FIX, "pre_fix.py", "exec"), {})
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _AfterTorch())
"""
#: pytorch#151589's reproducer as a user has it: no config set, the default alignment asserts.
VIEW_ALIGN = """
import torch

def f(x):
    return x[2:].view(dtype=torch.float32) + 1

x = torch.randn(2050, dtype=torch.bfloat16)
torch.testing.assert_close(torch.compile(f)(x), f(x))
print("ok")
"""


def _seed(name: str) -> str:
    """A string constant of tests/verdicts/test_canaries_can_fail.py, the one place the bugs are put back."""
    tree = ast.parse((REPO / "tests" / "verdicts" / "test_canaries_can_fail.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is gone from test_canaries_can_fail.py")


@pytest.mark.heavy
def test_why_view_dtype_align_on_the_pre_fix_torch_names_the_issue_and_proves_its_workaround(tmp_path):
    _torch_or_skip()
    site = tmp_path / "prefix"
    site.mkdir()
    (site / "pre_fix.py").write_text(_seed("PRE_FIX_ALIGNMENT"))
    (site / "sitecustomize.py").write_text(AFTER_TORCH)
    env = _env(tmp_path, PYTHONPATH=os.pathsep.join([str(site), ENV["PYTHONPATH"]]))
    doc = _why(tmp_path, _program(tmp_path, VIEW_ALIGN), env)
    c = doc["conclusion"]
    assert doc["baseline"]["exit_code"] == 1 and doc["triage"]["id"] == "view-dtype-align", doc["triage"]
    assert c["kind"] == "environment" and c["issue"] == "view-dtype-align", c
    assert c["workaround"] == "export TORCHINDUCTOR_ALIGNMENT_ASSERTS=0"
    assert c["sentence"].startswith("The cause is view-dtype-align; the workaround, proved here"), c


@pytest.mark.heavy
def test_why_block_mask_with_a_gxx_that_rejects_inductors_cpp_names_that_compiler(tmp_path):
    """The upstream unit test (the canary script) with CXX pointing at a g++ that answers Inductor's
    C++ with "conflicting declaration": the compiler setting is what flips it, narrowed to CXX."""
    _torch_or_skip()
    which_or_skip("g++")
    fake = tmp_path / "bin" / "g++"
    fake.parent.mkdir()
    fake.write_text(_seed("CONFLICTING_GXX"))
    fake.chmod(0o755)
    prog = tmp_path / "block_mask.py"
    shutil.copy(REPO / "inductor_doctor" / "target" / "canaries" / "block_mask_cpu.py", prog)
    doc = _why(tmp_path, str(prog), _env(tmp_path, CXX=str(fake)))
    c = doc["conclusion"]
    assert doc["triage"]["id"] == "block-mask-cpu", doc["triage"]
    assert c["kind"] == "environment" and c["unset"] == ["CXX"], c
    assert c["workaround"] == "unset CXX" and "your compiler settings: CXX" in c["sentence"], c


# --- a read-only /dev/shm: compile workers cannot start their pool --------------------------------

#: Runs "$@" in a private mount namespace whose /dev/shm is a read-only tmpfs (root only).
READ_ONLY_SHM = 'mount -t tmpfs -o ro,size=1m tmpfs /dev/shm && exec "$@"'
SEMAPHORE = "import multiprocessing; multiprocessing.Lock(); print('semaphores work')"


def _read_only_shm(argv: list, env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a private mount namespace")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode(errors='replace').strip()}")
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", READ_ONLY_SHM, "sh", *argv]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.heavy
def test_a_read_only_dev_shm_breaks_no_cpu_compile_in_this_torch(tmp_path):
    """torch 2.13's CPU path compiles its C++ kernels on threads and starts no worker pool (the pool
    is for Triton kernels, started only where Triton is installed), so a read-only /dev/shm, which
    makes every POSIX semaphore fail, changes nothing for a CPU program: `why` finds nothing to
    diagnose and says so (exit 2), and `run` adds nothing. On a GPU host the pool is started and
    tests/gpu_pass.sh's atfailure part runs the CUDA program the same way."""
    _torch_or_skip()
    env = _env(tmp_path)
    sem = _read_only_shm([sys.executable, "-c", SEMAPHORE], env)
    assert sem.returncode != 0 and "Read-only file system" in sem.stderr, (sem.stdout, sem.stderr[-500:])
    prog = _program(tmp_path, COMPILED)
    ran = _read_only_shm([*DOCTOR, "run", "--", sys.executable, prog], env)
    assert ran.returncode == 0 and "inductor-doctor" not in ran.stderr, ran.stderr[-2000:]
    doc_path = tmp_path / "why.json"
    why = _read_only_shm([*DOCTOR, "why", "--format", "json", "--output", str(doc_path), "--", sys.executable,
                          prog], _env(tmp_path, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "second-cache")))
    doc = json.loads(doc_path.read_text())
    assert why.returncode == 2 and doc["conclusion"]["kind"] == "baseline-passed", doc["conclusion"]
    assert doc["conclusion"]["sentence"].startswith("The command succeeded here")


# --- why --versions: other torch releases, installed for real -----------------------------------------

#: The lowering bug, and each torch that ran it written down (which release the scratch venv had).
VERSIONED_LOWERING_BUG = LOWERING_BUG.replace(
    "from torch._inductor import lowering\n",
    "from torch._inductor import lowering\nimport os\n\n"
    "with open(os.environ[\"WHY_TORCH_SEEN\"], \"a\") as fh:\n"
    "    fh.write(torch.__version__ + \"\\n\")\n", 1)


@pytest.mark.envs
def test_why_versions_installs_the_releases_and_concludes_in_words(tmp_path):
    """The whole --versions path against the real index: each release in a scratch venv of the
    command's interpreter (the command's own site-packages seen after it), the program re-run there,
    the venvs removed. Where PyPI's build is the only one reachable (PyTorch's CPU index is not, on
    some hosts) it is installed instead and the row says so; a release that cannot be installed here
    (a pip constraint capping torch, no network) is said plainly in the conclusion. Several GB."""
    _torch_or_skip()
    seen = tmp_path / "seen.txt"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = _env(tmp_path, WHY_TORCH_SEEN=str(seen), TMPDIR=str(scratch))
    prog = _program(tmp_path, VERSIONED_LOWERING_BUG)
    proc = subprocess.run([*DOCTOR, "why", "--versions", "--no-bisect", "--jobs", "2", "--timeout", "900",
                           "--format", "json", "--output", str(tmp_path / "why.json"), "--", sys.executable,
                           prog],
                          env=env, capture_output=True, text=True, timeout=5400)
    doc = json.loads((tmp_path / "why.json").read_text())
    c = doc["conclusion"]
    assert c["kind"] == "layer" and c["layer"] == "inductor", (c, proc.stderr[-3000:])
    rows = {v["key"]: v for v in doc["variations"] if v["kind"] == "release"}
    from inductor_doctor.core.releases import RELEASES
    from inductor_doctor.why import versions as R

    installed = R.torch_version(sys.executable)
    expected = R.candidates(installed, RELEASES["torch"])
    assert sorted(rows) == sorted(f"torch:{r}" for r, _ in expected), rows
    ran = {key: row for key, row in rows.items() if row["status"] != "not run"}
    for key, row in rows.items():
        release = key.split(":", 1)[1]
        if key in ran:  # it was installed and the program ran with it, for real
            versions = seen.read_text().splitlines()
            assert any(line.split("+")[0] == release for line in versions), versions
            assert row["status"] == "fails the same way", row  # the bug is the program's own patch
        else:
            assert row["run"]["error"].startswith("could not install"), row
            assert f"torch {release} (" in c["sentence"] and "could not be tried here" in c["sentence"], c
            assert "Traceback" not in c["sentence"]
    previous = [r for r, role in expected if role == "previous"]
    if previous and f"torch:{previous[0]}" in ran:
        assert f"torch {previous[0]} fails too: it is not new in this release." in c["sentence"], c
    assert ran, f"no release could be installed here: {c['sentence']}"
    assert not list(scratch.glob("inductor-doctor-*")), "a scratch venv was left behind"
