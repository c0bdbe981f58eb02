"""Benchmark: every speed goal of the doctor beside its floor, all measured in one run.

    python bench/bench_speed.py [--runs N] [--python PATH]

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
The doctor runs from this checkout with its bytecode compiled first (into a private
PYTHONPYCACHEPREFIX), as `pip install` leaves an installed package: a checkout on a machine with
PYTHONDONTWRITEBYTECODE set would otherwise recompile ~250 modules on every start.
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
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    if PYC is not None:
        env["PYTHONPYCACHEPREFIX"] = str(PYC)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def median(argv: List[str], env: Dict[str, str], runs: int) -> float:
    timed(argv, env)  # warm the disk cache once
    return statistics.median(timed(argv, env) for _ in range(runs))


def preflight_median(me: str, py: str, env: Dict[str, str], runs: int) -> float:
    """The first call decides (and keeps its record); each later one, in a fresh process, is timed
    inside it, as a library that already imported torch would see it."""
    env = dict(env, PYTHONPATH=str(REPO))
    subprocess.run([me, "-c", PREFLIGHT, py], env=env, check=True, stdout=subprocess.DEVNULL)
    took = []
    for _ in range(runs):
        out = subprocess.run([me, "-c", PREFLIGHT, py], env=env, check=True, capture_output=True, text=True)
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
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has torch")
    ns = ap.parse_args()
    py, me = ns.python, sys.executable
    doctor = [me, "-m", "inductor_doctor"]
    target = [] if py == me else ["--python", py]
    rows: List[Tuple[str, float, str, Optional[str]]] = []
    global PYC
    with tempfile.TemporaryDirectory(prefix="indoc-bench-") as tmp:
        root = Path(tmp)
        PYC = root / "pyc"
        subprocess.run([me, "-m", "compileall", "-q", str(REPO / "inductor_doctor")], check=True,
                       env=dict(os.environ, PYTHONPYCACHEPREFIX=str(PYC)), stdout=subprocess.DEVNULL)
        env = fresh(root / "floor")
        floor_pass = median([py, "-c", "pass"], env, ns.runs)
        collect_env = median([py, "-m", "torch.utils.collect_env"], env, 3)
        compiles = {"cpu": timed([py, "-c", COMPILE, "cpu"], fresh(root / "cpu"))}
        if has_gpu(py):
            compiles["cuda"] = timed([py, "-c", COMPILE, "cuda"], fresh(root / "cuda"))
        cpu = compiles["cpu"]

        first_env = fresh(root / "first")
        first = timed([*doctor, "check", "--quiet", *target], first_env)
        no_cache = timed([*doctor, "check", "--quiet", "--no-cache", *target], first_env)
        timed([*doctor, "check", "--quiet", *target], first_env)  # fills the canary cache
        repeated = median([*doctor, "check", "--quiet", *target], first_env, 3)
        small = {name: median([*doctor, *args], first_env, ns.runs) for name, args in (
            ("--version", ["--version"]), ("--help", ["--help"]), ("list", ["list"]),
            ("explain block-mask-cpu", ["explain", "block-mask-cpu"]))}
        probe = median([*doctor, "probe", *target], first_env, ns.runs)
        preflight = preflight_median(me, py, first_env, ns.runs)

    print("floors (fresh processes, nothing kept):")
    print(f"  python -c pass                 {floor_pass:7.3f} s")
    print(f"  collect_env                    {collect_env:7.3f} s")
    for device, took in compiles.items():
        print(f"  cold torch.compile on {device:<8} {took:7.2f} s")
    rows.append(("first check ever", first, f"{first / cpu:.2f} x cold CPU compile", "<= 1.25 x"))
    rows.append(("check --no-cache", no_cache, f"{no_cache / cpu:.2f} x cold CPU compile",
                 "<= 0.6 x, <= 30 s"))
    rows.append(("repeated check", repeated, "", "<= 0.5 s"))
    for name, took in small.items():
        rows.append((name, took, f"{took / floor_pass:.1f} x python -c pass", "<= 0.15 s"))
    rows.append(("probe", probe, f"{probe / collect_env:.3f} x collect_env", "<= 0.15 x collect_env"))
    rows.append(("preflight, from its record", preflight, "in the caller, import included", "<= 0.05 s"))
    print("\nthe doctor:")
    print(f"  {'figure':<26} {'wall':>8}   {'against its floor':<32} goal")
    for name, took, ratio, goal in rows:
        print(f"  {name:<26} {took:7.3f}s   {ratio:<32} {goal}")


if __name__ == "__main__":
    main()
