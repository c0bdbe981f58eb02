"""Benchmark: `check --distributed` on 2 torchrun ranks against a single-rank `check`, same options;
and `merge` of a fleet's reports (`--merge N`): its time, memory and how many lines it prints.

What the fleet mode costs on top of the check itself: torchrun's own start (it imports torch), each
rank's probe, the gather helper's start (its own store client: no `import torch`), the store round
trip and the merge. The goal is at most 1.3 × the larger of a single-rank check and torchrun
starting two `true`s; the overhead is roughly constant, so the ratio is worst with `--static` (the
shortest check). Each figure is the median of `--repeat` runs, the three kinds alternating on one
machine, caches off (`--no-cache`); the first round warms the page cache and is not counted:

    python bench/bench_fleet.py [--repeat 3] [--only ID,...] [--canaries]

`--merge N` writes N reports of 8-GPU hosts (`node0000`...) made from one real `check --static`
report of this machine, 21 of them different (8 with an affected GPU, 6 on another torch, 4 on
another driver, 3 with an inconclusive CPU check), merges them at 80 columns and prints the wall
time, the peak memory and the line count: a fleet's summary must fit a screen (at most 60 lines).

    python bench/bench_fleet.py --merge 2000

`--repeated` times what a node pays before every job: a repeated `check` of a healthy node, its
canaries answered from the result cache (goal: at most 0.3 s wall and 60 MB), as a person reads it
(text) and as a fleet engine's adapter runs it (`--format node-verdict`, no text rendering). Each
checkout gets a result cache and bytecode of its own (an installed package has its bytecode) and
two warm-up runs; then the checkouts' runs alternate, so that a loaded machine weighs on both
alike. `--against DIR` adds another checkout (the base of a change: `git archive main | tar -x -C
DIR`):

    python bench/bench_fleet.py --repeated [--against DIR] [--repeat 15]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

H100 = "NVIDIA H100 80GB HBM3"
#: How the differing hosts of a `--merge` fleet differ: (what, how many).
ODD = (("affected", 8), ("torch", 6), ("driver", 4), ("inconclusive", 3))
SCREEN_LINES = 60


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


def fleet_member(base: Dict[str, Any], host: str, odd: str = "", gpu: int = 0) -> Dict[str, Any]:
    """One 8-GPU host's report, `odd` in one way (or none): every CUDA issue checked on each of its
    GPUs, view-dtype-align canaries among them."""
    d = copy.deepcopy(base)
    env = d["environment"]
    env["host"]["hostname"] = host
    env["cuda"]["gpus"] = [{"index": i, "name": H100} for i in range(8)]
    if odd == "torch":
        env["torch"]["version"] = "2.12.0+cu128"
    if odd == "driver":
        env["cuda"]["driver_version"] = "550.54.15"
    template = next(r for r in d["results"] if r["id"] == "view-dtype-align")
    results = []
    for r in d["results"]:  # a GPU host's report: each issue of a bare `cuda` row is checked per GPU
        if r["id"] == "view-dtype-align":
            continue
        results += [dict(r, device=f"cuda:{i}") for i in range(8)] if r["device"] == "cuda" else [r]
    for i in range(8):
        r = dict(template, device=f"cuda:{i}", status="ok", basis="canary", reason="canary ran clean")
        if odd == "affected" and i == gpu:
            r.update(status="affected", reason="canary reproduced it: Expect the tensor to be 16 bytes")
        results.append(r)
    if odd == "inconclusive":
        for r in results:
            if r["id"] == "block-mask-cpu" and r["device"] == "cpu":
                r.update(status="inconclusive", basis="canary", reason="canary timed out after 120s")
    d["results"] = results
    return d


def write_fleet(base: Dict[str, Any], n: int, where: Path) -> List[Path]:
    """N reports, the differing hosts spread over the fleet."""
    odd: Dict[int, Tuple[str, int]] = {}
    step = max(1, n // (sum(k for _, k in ODD) + 1))
    slot = 0
    for what, count in ODD:
        for k in range(count):
            slot += 1
            odd[(slot * step) % n] = (what, k % 8)
    paths = []
    for i in range(n):
        what, gpu = odd.get(i, ("", 0))
        path = where / f"node{i:04d}.json"
        path.write_text(json.dumps(fleet_member(base, f"node{i:04d}", what, gpu)))
        paths.append(path)
    return paths


def bench_merge(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        env = dict(os.environ, INDUCTOR_DOCTOR_CACHE_DIR=str(where / "cache"), COLUMNS="80", NO_COLOR="1")
        check = [sys.executable, "-m", "inductor_doctor", "check", "--static", "--format", "json", "-q"]
        proc = subprocess.run(check, capture_output=True, text=True, env=env)
        base = json.loads(proc.stdout)
        paths = write_fleet(base, n, where)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "inductor_doctor", "merge", *map(str, paths)],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode not in (0, 1):
        sys.exit(f"merge failed ({proc.returncode}): {proc.stderr[-2000:]}")
    lines = proc.stdout.splitlines()
    print(f"merge of {n} reports ({sum(k for _, k in ODD)} hosts differ), at 80 columns:")
    print(f"wall time:                       {wall:7.2f} s")
    print(f"peak memory:                     {peak_mb:7.0f} MB")
    print(f"lines printed:                   {len(lines):7d}   (a screen: at most {SCREEN_LINES})")
    print(f"widest line:                     {max(map(len, lines)):7d}")


def _run_measured(cmd: List[str], env: dict) -> Tuple[float, float, float, int]:
    """(wall s, CPU s of the whole process tree it waited for, peak RSS MB of the largest process, rc)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def bench_repeated(trees: List[Tuple[str, Path]], repeat: int, python: str) -> None:
    """A repeated `check` per checkout, alternating; the medians and the worst memory."""
    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        for name, tree in trees:
            # The checkout first, before what the environment already puts on the path (the extra
            # wheels a host without an index installs beside the interpreter, e.g. pyelftools).
            path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
            env = dict(os.environ, PYTHONPATH=path, INDUCTOR_DOCTOR_CACHE_DIR=f"{tmp}/{name}-cache",
                       PYTHONPYCACHEPREFIX=f"{tmp}/{name}-pyc", NO_COLOR="1")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            subprocess.run([python, "-m", "compileall", "-q", str(tree / "inductor_doctor")], env=env,
                           capture_output=True)
            for _ in range(2):  # the first fills the result cache; the second is a repeat already
                subprocess.run([python, "-m", "inductor_doctor", "check", "-q"], env=env, capture_output=True)
            envs[name] = env
        forms = {"": ["check", "-q"], " node-verdict": ["check", "-q", "--format", "node-verdict"]}
        rows: Dict[str, List[Tuple[float, float, float, int]]] = {
            name + form: [] for name, _ in trees for form in forms}
        bare: List[float] = []
        for _ in range(repeat):
            for name, _tree in trees:
                for form, args in forms.items():
                    cmd = [python, "-m", "inductor_doctor", *args]
                    rows[name + form].append(_run_measured(cmd, envs[name]))
            bare.append(_run_measured([python, "-c", "pass"], envs[trees[0][0]])[0])
    print(f"repeated check, {repeat} runs each, alternating ({os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}); the interpreter alone (`python -c pass`): "
          f"{statistics.median(bare):.3f} s")
    print(f"{'checkout':<24} {'wall median':>12} {'wall min':>9} {'CPU median':>11} {'peak RSS':>9}  exit")
    for name, runs in rows.items():
        walls = [r[0] for r in runs]
        print(f"{name:<24} {statistics.median(walls):10.3f} s {min(walls):7.3f} s "
              f"{statistics.median(r[1] for r in runs):9.3f} s {max(r[2] for r in runs):6.1f} MB  "
              f"{sorted({r[3] for r in runs})}")
    print("goal: at most 0.3 s wall and 60 MB")
    failed = sorted({r[3] for runs in rows.values() for r in runs} - {0, 1})
    if failed:  # a check that did not run (exit 3: the doctor could not start) measures nothing
        sys.exit(f"a repeated check exited {failed}: the figures above are not a check's; run "
                 f"`{python} -m inductor_doctor check -q` with this PYTHONPATH to see why")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="issues to check (default: all)")
    ap.add_argument("--canaries", action="store_true", help="run canaries too (default: --static)")
    ap.add_argument("--merge", type=int, default=0, metavar="N", help="merge N hosts' reports instead")
    ap.add_argument("--repeated", action="store_true", help="time a repeated check of a healthy node instead")
    ap.add_argument("--against", type=Path, default=None, metavar="DIR",
                    help="--repeated: also time this other checkout, alternating with this one")
    ns = ap.parse_args()
    if ns.merge:
        bench_merge(ns.merge)
        return
    if ns.repeated:
        here = Path(__file__).resolve().parents[1]
        trees = [("this", here)] + ([("against", ns.against.resolve())] if ns.against else [])
        bench_repeated(trees, max(ns.repeat, 1), sys.executable)
        return
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
        for n in range(ns.repeat + 1):
            if n == 1:  # the first round warmed the page cache and the bytecode: not counted
                singles.clear()
                fleets.clear()
                launcher.clear()
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
    larger = max(single_s, torchrun_s)
    print(f"ratio to the larger of the two:  {fleet_s / larger:7.2f}   (goal: at most 1.3)")
    print(f"overhead:                        {fleet_s - single_s:7.2f} s (torchrun's own start included)")


def _runs(xs: List[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


if __name__ == "__main__":
    main()
