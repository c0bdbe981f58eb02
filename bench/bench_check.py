"""Benchmark: `check` wall time against its slowest single canary, and a repeated (cached) `check`.

Goals: cold `check` ≤ 1.25 × the slowest canary run alone (parallelism and probing overhead are
nearly free); a repeated `check` on an unchanged environment ≤ 0.5 s (answered by the result cache).
All figures come from one run of this script, on the same machine, back to back:

    python bench/bench_check.py [--python PATH] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def doctor(args, cache_dir):
    env = dict(os.environ, INDUCTOR_DOCTOR_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "inductor_doctor", *args], capture_output=True, text=True,
                          env=env)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"doctor failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, (json.loads(proc.stdout) if "--format" in args else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=None)
    ap.add_argument("--jobs", default=None)
    ns = ap.parse_args()
    extra = (["--python", ns.python] if ns.python else []) + (["--jobs", ns.jobs] if ns.jobs else [])
    with tempfile.TemporaryDirectory() as cache:
        wall, report = doctor(["check", "--format", "json", "--no-cache", *extra], cache)
        canaries = [r for r in report["results"] if r["basis"] == "canary"]
        if not canaries:
            sys.exit("no canary ran here; nothing to compare")
        slowest = max(canaries, key=lambda r: r["duration_s"])
        alone, alone_report = doctor(
            ["check", "--format", "json", "--no-cache", "--only", slowest["id"], *extra], cache)
        # The repeated check: one run fills the cache, the next one is timed.
        doctor(["check", "--format", "json", *extra], cache)
        repeat, _ = doctor(["check", "--format", "json", *extra], cache)
    print(f"canaries run:                 {len(canaries)} ({', '.join(sorted({r['id'] for r in canaries}))})")
    print(f"check, cold caches:           {wall:7.2f} s")
    where = f"{slowest['id']} on {slowest['device']}"
    print(f"slowest canary in that check: {slowest['duration_s']:7.2f} s ({where})")
    print(f"check --only that one alone:  {alone:7.2f} s")
    print(f"ratio check / slowest alone:  {wall / alone:7.2f}   (goal <= 1.25)")
    print(f"repeated check (cached):      {repeat:7.2f} s   (goal <= 0.5 s)")


if __name__ == "__main__":
    main()
