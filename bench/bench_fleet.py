"""Benchmark: `check --distributed` on 2 torchrun ranks against a single-rank `check`, same options.

What the fleet mode costs on top of the check itself: torchrun's own start (it imports torch), each
rank's probe, the gather helper's `import torch` (overlapped with the check, so free where cores
are free), the store round trip and the merge. The overhead is roughly constant, so the ratio is
worst with `--static` (the shortest check) and falls as canaries make the check longer. Each
figure is the median of `--repeat` runs, back to back on one machine, caches off (`--no-cache`):

    python bench/bench_fleet.py [--repeat 3] [--only ID,...] [--canaries]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd: List[str], env: dict) -> Tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall, json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="issues to check (default: all)")
    ap.add_argument("--canaries", action="store_true", help="run canaries too (default: --static)")
    ns = ap.parse_args()
    opts = ["--no-cache", "--format", "json"] + ([] if ns.canaries else ["--static"])
    if ns.only:
        opts += ["--only", ns.only]
    doctor = [sys.executable, "-m", "inductor_doctor", "check", *opts]
    singles: List[float] = []
    fleets: List[float] = []
    launcher: List[float] = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, INDUCTOR_DOCTOR_CACHE_DIR=cache)
        run = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2"]
        for _ in range(ns.repeat):
            wall, single = timed(doctor, env)
            singles.append(wall)
            cmd = [*run, "--master-port", str(free_port()), "--no-python", *doctor, "--distributed"]
            wall, fleet = timed(cmd, env)
            fleets.append(wall)
            assert fleet["schema"] == "inductor-doctor/merge/v1" and not fleet["missing"], fleet["missing"]
            start = time.perf_counter()
            bare = [*run, "--master-port", str(free_port()), "--no-python", "true"]
            subprocess.run(bare, capture_output=True)
            launcher.append(time.perf_counter() - start)
    single_s, fleet_s, torchrun_s = (statistics.median(x) for x in (singles, fleets, launcher))
    print(f"options:                         {' '.join(opts)}")
    print(f"single-rank check:               {single_s:7.2f} s   (runs: {_runs(singles)})")
    print(f"check --distributed, 2 ranks:    {fleet_s:7.2f} s   (runs: {_runs(fleets)})")
    print(f"torchrun alone (2 x `true`):     {torchrun_s:7.2f} s")
    print(f"results: single {len(single['results'])}, fleet {len(fleet['results'])} in "
          f"{len(fleet['sources'])} reports")
    print(f"ratio distributed / single:      {fleet_s / single_s:7.2f}")
    print(f"overhead:                        {fleet_s - single_s:7.2f} s (torchrun's own start included)")


def _runs(xs: List[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


if __name__ == "__main__":
    main()
