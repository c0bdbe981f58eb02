"""Benchmark: a repeated (cached) `check` of this checkout against another checkout, in one run.

A change to the flow of `check` must not make the check a user repeats slower. Both checkouts run
as `python -m inductor_doctor` from their own tree, each with its own doctor cache (filled by a first
check, so that every timed check answers its canaries from the cache, as a repeated check does), one
after the other in rounds so that the machine's load falls on both alike; the figures are medians.

    git worktree add /tmp/before <commit>    # or: git archive <commit> | tar -x -C /tmp/before
    python bench/bench_repeat.py --against /tmp/before [--rounds 7] [-- check args ...]

Other argument lists time other repeated commands (`-- check --static`, `-- probe`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent.parent


def timed(tree: Path, args: List[str], cache: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), INDUCTOR_DOCTOR_CACHE_DIR=cache)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "inductor_doctor", *args], capture_output=True, text=True,
                          env=env, cwd=str(tree))
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{tree}: doctor failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, type=Path, help="the other checkout (before a change)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("args", nargs="*", help="the command to repeat (default: check --format json -q)")
    ns = ap.parse_args()
    args = ns.args or ["check", "--format", "json", "-q"]
    trees = {"before": ns.against.resolve(), "after": HERE}
    times: Dict[str, List[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        caches = {name: os.path.join(tmp, name) for name in trees}
        for name, tree in trees.items():  # fill each cache: the timed checks are repeated ones
            timed(tree, args, caches[name])
            timed(tree, args, caches[name])
        for _ in range(ns.rounds):
            for name, tree in trees.items():
                times[name].append(timed(tree, args, caches[name]))
    print(f"repeated `{' '.join(args)}`, {ns.rounds} rounds, median (min-max):")
    for name, tree in trees.items():
        t = times[name]
        print(f"  {name:6} {statistics.median(t):6.3f} s  ({min(t):.3f}-{max(t):.3f})  {tree}")
    ratio = statistics.median(times["after"]) / statistics.median(times["before"])
    print(f"  after / before: {ratio:.2f}")


if __name__ == "__main__":
    main()
