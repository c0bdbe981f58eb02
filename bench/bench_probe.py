"""`inductor-doctor probe` against `python -m torch.utils.collect_env`: wall time and peak memory.

Each command runs in a fresh process, a few times after one warm-up run (so both read a warm disk
cache), and is measured two ways:

* tree RSS: the peak of the summed RSS of the process and all its descendants, polled every 10 ms
  with psutil. This is what the machine had to hold; the doctor's compilers and subprocesses count.
* largest process: `ru_maxrss` of the biggest single process, from `getrusage(RUSAGE_CHILDREN)` in a
  fresh wrapper process per run (exact, but blind to several processes alive at once).

Goals: the probe at most 0.2x collect_env's wall time and 0.25x its memory.

The probe remembers compiler answers (the const_data_ptr compile above all) on disk, keyed by the
files involved; the warm-up run fills that cache, as any earlier probe on the machine would.
`--cold` measures every probe run without it (`INDUCTOR_DOCTOR_NO_CACHE=1`), as on a first run.

    python bench/bench_probe.py [--runs 3] [--python PATH] [--live] [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import List, Sequence

import psutil

WALL_GOAL = 0.2
MEM_GOAL = 0.25
POLL_S = 0.01

# Runs one command and prints its children's ru_maxrss (KiB on Linux): a clean RUSAGE_CHILDREN.
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


@dataclass
class Sample:
    wall_s: float
    tree_peak_mib: float
    largest_mib: float
    returncode: int


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def measure_tree(argv: Sequence[str], env: dict) -> Sample:
    start = time.perf_counter()
    popen = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    proc = psutil.Process(popen.pid)
    peak = 0
    while popen.poll() is None:
        peak = max(peak, _tree_rss(proc))
        time.sleep(POLL_S)
    wall = time.perf_counter() - start
    return Sample(wall, peak / 2**20, 0.0, popen.returncode)


def measure_largest(argv: Sequence[str], env: dict) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv], capture_output=True, text=True, env=env, check=True
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def bench(name: str, argv: Sequence[str], runs: int, env: dict) -> List[Sample]:
    measure_tree(argv, env)  # warm-up: page cache, .pyc files
    samples = []
    for _ in range(runs):
        s = measure_tree(argv, env)
        s.largest_mib = measure_largest(argv, env)
        if s.returncode != 0:
            raise SystemExit(f"{name}: `{' '.join(argv)}` exited with {s.returncode}")
        samples.append(s)
    return samples


def med(samples: List[Sample], attr: str) -> float:
    return statistics.median(getattr(s, attr) for s in samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the interpreter both diagnose")
    ap.add_argument("--live", action="store_true", help="also measure `probe --live`")
    ap.add_argument("--cold", action="store_true", help="probe without its compiler-answer cache")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()

    env = dict(os.environ)
    env.setdefault("INDUCTOR_DOCTOR_CACHE_DIR", "/tmp/indoc-bench-cache")
    if args.cold:
        env["INDUCTOR_DOCTOR_NO_CACHE"] = "1"
    commands = {
        "probe": [
            sys.executable,
            "-m",
            "inductor_doctor",
            "probe",
            "--format",
            "json",
            "--python",
            args.python,
        ],
        "collect_env": [args.python, "-m", "torch.utils.collect_env"],
    }
    if args.live:
        commands["probe --live"] = [*commands["probe"], "--live"]

    results = {name: bench(name, argv, args.runs, env) for name, argv in commands.items()}
    ref = results["collect_env"]
    figures = {}
    for name, samples in results.items():
        figures[name] = {
            "wall_s": round(med(samples, "wall_s"), 3),
            "tree_peak_mib": round(med(samples, "tree_peak_mib"), 1),
            "largest_process_mib": round(med(samples, "largest_mib"), 1),
            "wall_ratio": round(med(samples, "wall_s") / med(ref, "wall_s"), 3),
            "tree_mem_ratio": round(med(samples, "tree_peak_mib") / med(ref, "tree_peak_mib"), 3),
            "largest_mem_ratio": round(med(samples, "largest_mib") / med(ref, "largest_mib"), 3),
        }
    if args.json:
        print(json.dumps({"runs": args.runs, "cpus": os.cpu_count(), "figures": figures}, indent=2))
        return 0
    cache = "cold: no compiler-answer cache" if args.cold else "warm compiler-answer cache"
    print(f"median of {args.runs} runs each, {os.cpu_count()} CPUs, target {args.python}, {cache}")
    print(
        f"{'command':<14}{'wall s':>9}{'tree MiB':>10}{'max-proc MiB':>14}{'wall x':>9}{'tree x':>9}"
        f"{'max-proc x':>12}"
    )
    for name, f in figures.items():
        print(
            f"{name:<14}{f['wall_s']:>9.2f}{f['tree_peak_mib']:>10.1f}{f['largest_process_mib']:>14.1f}"
            f"{f['wall_ratio']:>9.3f}{f['tree_mem_ratio']:>9.3f}{f['largest_mem_ratio']:>12.3f}"
        )
    p = figures["probe"]
    print(
        f"goal: wall <= {WALL_GOAL}x -> {'met' if p['wall_ratio'] <= WALL_GOAL else 'MISSED'}; "
        f"memory <= {MEM_GOAL}x -> tree {'met' if p['tree_mem_ratio'] <= MEM_GOAL else 'MISSED'}, "
        f"largest process {'met' if p['largest_mem_ratio'] <= MEM_GOAL else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
