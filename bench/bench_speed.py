"""Benchmark: every speed goal of the doctor beside its floor, all measured in one run.

    python bench/bench_speed.py [--runs N] [--rounds K] [--python PATH] [--wheels DIR | --checkout]

Floors, in fresh processes with fresh Inductor/Triton caches and a fresh TMPDIR (so that nothing
Inductor keeps between runs helps): `python -c pass`, `python -m torch.utils.collect_env`, and a
minimal `torch.compile(lambda x: x.sin() + 1)` on each device (cpu; cuda where there is a GPU).
Then the doctor:

| figure | goal |
|---|---|
| the first `check` ever (nothing kept anywhere) | <= 1.25 x the cold CPU compile |
| `check --no-cache` (machine facts kept, no verdict reused) | <= 0.6 x the cold CPU compile; <= 30 s |
| a repeated, unchanged `check` | <= 0.5 s |
| `--version`, `--help`, `list`, `explain ID` (median of --runs) | <= 0.15 s |
| `probe` (median of --runs) | <= 0.15 x collect_env |
| `preflight("cpu")` answered from its record, import included (median of --runs) | <= 0.05 s |

Ratios are taken within this one run, on this machine: never compare figures across machines.

The doctor runs as a user runs it: its console script, installed with `pip install <checkout>` into a
new venv that resolves its dependencies from the registry (the newest ones; `--wheels DIR` installs
them from a folder of wheels instead, on a host with no package index). A venv sees nothing of the
machine's own site-packages, whose `.pth` start-up hooks would otherwise be timed as the doctor's.
Where no venv can be made, the doctor runs from this checkout with the bench's interpreter and its
bytecode compiled first (into a private PYTHONPYCACHEPREFIX), as an install has it; the output says
which.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
#: A library's second preflight: the milliseconds from `import inductor_doctor` to the answer.
PREFLIGHT = ("import json, sys, time; t = time.perf_counter(); import inductor_doctor as d; "
             "v = d.preflight('cpu', python=sys.argv[1]); "
             "print(json.dumps([v.cached, time.perf_counter() - t]))")
COMPILE = ("import torch, sys; d = sys.argv[1]; f = torch.compile(lambda x: x.sin() + 1); "
           "f(torch.ones(8, device=d)); torch.cuda.synchronize() if d == 'cuda' else None")


def timed(argv: List[str], env: Dict[str, str], ok: Tuple[int, ...] = (0, 1)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(REPO))
    took = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took


#: The doctor's compiled bytecode (set by main()); never part of what "nothing kept" clears.
PYC: Optional[Path] = None


def fresh(root: Path) -> Dict[str, str]:
    """An environment with nothing kept: Inductor, Triton, TMPDIR and the doctor's cache all new."""
    if root.exists():
        shutil.rmtree(root)
    (root / "tmp").mkdir(parents=True)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(root / "inductor"),
               TRITON_CACHE_DIR=str(root / "triton"), TMPDIR=str(root / "tmp"),
               INDUCTOR_DOCTOR_CACHE_DIR=str(root / "doctor"))
    if PYC is not None:  # the doctor runs from the checkout
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        env["PYTHONPYCACHEPREFIX"] = str(PYC)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:  # the installed doctor: a PYTHONPATH naming a checkout would run that instead
        env.pop("PYTHONPATH", None)
    return env


def install(venv: Path, wheels: Optional[str]) -> Tuple[Optional[Path], str]:
    """The doctor installed as a user installs it, in a venv of its own: (its python, how), or
    (None, why not). The venv's own pip where the interpreter has ensurepip, else this pip aimed at
    the venv (`pip --python`)."""
    me = sys.executable
    what = ["-q", "--disable-pip-version-check", *(
        ["--no-index", "--find-links", wheels, "inductor-doctor"] if wheels else [str(REPO)])]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_TARGET", "PIP_PREFIX")}
    python = venv / "bin" / "python"
    why = "no output"
    for steps in ([[me, "-m", "venv", str(venv)], [str(python), "-m", "pip", "install", *what]],
                  [[me, "-m", "venv", "--without-pip", str(venv)],
                   [me, "-m", "pip", "--python", str(python), "install", *what]]):
        shutil.rmtree(venv, ignore_errors=True)
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                why = ((proc.stderr or proc.stdout).strip().splitlines() or ["no output"])[-1][:200]
                break
        else:
            how = (f"from the wheels in {shown(wheels)}" if wheels
                   else "resolving its dependencies from the registry")
            return python, f"the doctor's console script, installed in a new venv {how}"
    return None, f"could not install the doctor into a new venv: {why}"


def shown(path: object) -> str:
    """A path as the figures are published (docs/speed.md): inside the checkout relative to it, in
    the home directory under `~`, never this machine's absolute path."""
    text = os.path.abspath(str(path))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if text == repo or text.startswith(repo + os.sep):
        return os.path.relpath(text, repo) + " (in the checkout)"
    home = os.path.expanduser("~")
    return "~" + text[len(home):] if home != "/" and text.startswith(home + os.sep) else text


def median(argv: List[str], env: Dict[str, str], runs: int) -> float:
    timed(argv, env)  # warm the disk cache once
    return statistics.median(timed(argv, env) for _ in range(runs))


def preflight_median(py: str, env: Dict[str, str], runs: int, doctor_path: Optional[str]) -> float:
    """The first call decides (and keeps its record); each later one, in a fresh process, is timed
    inside it, as a library that already imported torch would see it: in the interpreter with torch,
    the doctor importable beside it (`doctor_path`: the venv's site-packages; the checkout is on
    PYTHONPATH already)."""
    if doctor_path:
        env = dict(env, PYTHONPATH=doctor_path)
    subprocess.run([py, "-c", PREFLIGHT, py], env=env, check=True, stdout=subprocess.DEVNULL)
    took = []
    for _ in range(runs):
        out = subprocess.run([py, "-c", PREFLIGHT, py], env=env, check=True, capture_output=True, text=True)
        cached, seconds = json.loads(out.stdout.strip().splitlines()[-1])
        if not cached:
            raise SystemExit("preflight's second call was not answered from its record")
        took.append(seconds)
    return statistics.median(took)


def has_gpu(python: str) -> bool:
    code = "import torch; print(torch.cuda.is_available())"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()
    return out == "True"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs of each quick figure (the median is shown)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds of the slow figures, each a cold compile then the doctor's checks; the "
                         "median wall and the median of each round's ratio are shown (a shared host's "
                         "speed drifts by minutes, so a ratio is taken within its round)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has torch")
    ap.add_argument("--wheels", help="install the doctor and its dependencies from this folder of wheels")
    ap.add_argument("--checkout", action="store_true", help="run the doctor from this checkout instead")
    ns = ap.parse_args()
    py = ns.python
    rows: List[Tuple[str, float, str, Optional[str]]] = []
    global PYC
    with tempfile.TemporaryDirectory(prefix="indoc-bench-") as tmp:
        root = Path(tmp)
        me, how = (None, "asked for with --checkout") if ns.checkout else install(root / "venv", ns.wheels)
        if me is None:
            how = f"the checkout, with {sys.executable} ({how})"
            me = Path(sys.executable)
            PYC = root / "pyc"
            subprocess.run([str(me), "-m", "compileall", "-q", str(REPO / "inductor_doctor")], check=True,
                           env=dict(os.environ, PYTHONPYCACHEPREFIX=str(PYC)), stdout=subprocess.DEVNULL)
            doctor = [str(me), "-m", "inductor_doctor"]
        else:
            doctor = [str(me.parent / "inductor-doctor")]
        target = [] if str(me) == py else ["--python", py]
        env = fresh(root / "floor")
        floor_pass = median([py, "-c", "pass"], env, ns.runs)
        doctor_pass = median([str(me), "-c", "pass"], env, ns.runs)
        collect_env = median([py, "-m", "torch.utils.collect_env"], env, 3)
        gpu = has_gpu(py)
        rounds: Dict[str, List[float]] = {"cpu": [], "cuda": [], "first": [], "no_cache": []}
        for _ in range(ns.rounds):  # each round: the floor, then the doctor, on a machine in one state
            rounds["cpu"].append(timed([py, "-c", COMPILE, "cpu"], fresh(root / "cpu")))
            if gpu:
                rounds["cuda"].append(timed([py, "-c", COMPILE, "cuda"], fresh(root / "cuda")))
            first_env = fresh(root / "first")
            rounds["first"].append(timed([*doctor, "check", "--quiet", *target], first_env))
            rounds["no_cache"].append(timed([*doctor, "check", "--quiet", "--no-cache", *target], first_env))
        compiles = {d: statistics.median(rounds[d]) for d in ("cpu", "cuda") if rounds[d]}
        first, no_cache = statistics.median(rounds["first"]), statistics.median(rounds["no_cache"])
        first_ratio = statistics.median(f / c for f, c in zip(rounds["first"], rounds["cpu"]))
        no_cache_ratio = statistics.median(n / c for n, c in zip(rounds["no_cache"], rounds["cpu"]))
        timed([*doctor, "check", "--quiet", *target], first_env)  # fills the canary cache
        repeated = median([*doctor, "check", "--quiet", *target], first_env, 3)
        small = {name: median([*doctor, *args], first_env, ns.runs) for name, args in (
            ("--version", ["--version"]), ("--help", ["--help"]), ("list", ["list"]),
            ("explain block-mask-cpu", ["explain", "block-mask-cpu"]))}
        probe = median([*doctor, "probe", *target], first_env, ns.runs)
        site = None if PYC is not None else subprocess.run(
            [str(me), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True).stdout.strip()
        preflight = preflight_median(py, first_env, ns.runs, site)

    print(f"the doctor: {how}")
    if ns.rounds > 1:
        print(f"slow figures: the median of {ns.rounds} rounds; each round's cold CPU compile, first check "
              "and --no-cache check: " + "; ".join(
                  f"{c:.1f} / {f:.1f} / {n:.1f} s" for c, f, n in
                  zip(rounds["cpu"], rounds["first"], rounds["no_cache"])))
    print("floors (fresh processes, nothing kept):")
    print(f"  python -c pass                 {floor_pass:7.3f} s   (the interpreter with torch)")
    if doctor_pass != floor_pass or str(me) != py:
        print(f"  python -c pass, the doctor's   {doctor_pass:7.3f} s")
    print(f"  collect_env                    {collect_env:7.3f} s")
    for device, took in compiles.items():
        print(f"  cold torch.compile on {device:<8} {took:7.2f} s")
    rows.append(("first check ever", first, f"{first_ratio:.2f} x cold CPU compile", "<= 1.25 x"))
    rows.append(("check --no-cache", no_cache, f"{no_cache_ratio:.2f} x cold CPU compile",
                 "<= 0.6 x, <= 30 s"))
    rows.append(("repeated check", repeated, "", "<= 0.5 s"))
    for name, took in small.items():
        rows.append((name, took, f"{took / doctor_pass:.1f} x the doctor's python -c pass", "<= 0.15 s"))
    rows.append(("probe", probe, f"{probe / collect_env:.3f} x collect_env", "<= 0.15 x collect_env"))
    rows.append(("preflight, from its record", preflight, "in the caller, import included", "<= 0.05 s"))
    print("\nthe doctor:")
    print(f"  {'figure':<26} {'wall':>8}   {'against its floor':<32} goal")
    for name, took, ratio, goal in rows:
        print(f"  {name:<26} {took:7.3f}s   {ratio:<32} {goal}")


if __name__ == "__main__":
    main()
