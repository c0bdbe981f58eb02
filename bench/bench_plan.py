"""Benchmark: `plan` latency, in process and as the command a Dockerfile runs.

Goal: well under a second end to end, so the pre-install gate of a `docker build` costs nothing
next to the install it guards. Three figures, from one run of this script:

* in process, `run_plan` on a realistic requirements file (ranges, markers, nested `-r`), median of
  many runs: the planner itself;
* the same through `python -m inductor_doctor plan -r ...`, median of a few runs: what a user
  waits for, Python start-up and imports included;
* `python -c pass` for the floor of any command;
* `plan --suggest` for a machine given by options (two GPUs no one build covers: every release is
  judged, twice, and then each GPU alone: the slowest answer it gives), end to end, timed in the
  same rounds as `plan -r`, and its ratio to it: the goal is the time of a `plan` (ratio < 1.5) and
  under a second.

    python bench/bench_plan.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REQUIREMENTS = """\
--extra-index-url https://download.pytorch.org/whl/cu124
-r base.txt
torch>=2.4,<2.7 ; python_version >= "3.9"
torch_xla==2.5.1 ; sys_platform == "linux"
transformers>=4.40
numpy<2
"""
BASE = "triton\naccelerate>=0.30 # no version matters to the KB\n"
ARGS = ["--cxx", "clang++-19", "--cxxflags", "-O2", "--cuda", "12.4", "--driver", "550.54", "--gpu", "sm_90"]


def wall(cmd) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(REQUIREMENTS)
        (Path(tmp) / "base.txt").write_text(BASE)

        from inductor_doctor.commands.plan import run_plan
        from inductor_doctor.kb import registry
        from inductor_doctor.plan.resolve import PlanRequest

        request = PlanRequest(
            requirement_files=[req],
            cxx="clang++-19",
            cxxflags="-O2",
            cuda="12.4",
            driver="550.54",
            gpu="sm_90",
        )
        registry()  # imported once per process in real use too; timed in the CLI figure
        runs = []
        for _ in range(200):
            start = time.perf_counter()
            report = run_plan(request)
            runs.append(time.perf_counter() - start)
        in_process = statistics.median(runs)

        cli = [sys.executable, "-m", "inductor_doctor", "plan", "-r", str(req), *ARGS, "--format", "json"]
        suggest = [sys.executable, "-m", "inductor_doctor", "plan", "--suggest", "--gpu", "sm_61", "--gpu",
                   "sm_120", "--driver", "575.57.08", "--python-version", "3.11", "--format", "json"]
        plan_runs, suggest_runs = [], []
        for _ in range(ns.runs):  # interleaved: a load spike hits both alike
            plan_runs.append(wall(cli))
            suggest_runs.append(wall(suggest))
        end_to_end = statistics.median(plan_runs)
        suggest_e2e = statistics.median(suggest_runs)
        floor = statistics.median(wall([sys.executable, "-c", "pass"]) for _ in range(ns.runs))

    predicted = report.meta.get("predicted_ids", [])
    judged = len({f.id for f in report.findings})
    print(f"issues judged             : {judged} (predicted: {', '.join(predicted)})")
    print(f"run_plan, in process      : {in_process * 1000:.2f} ms (median of {len(runs)})")
    print(f"plan -r, end to end       : {end_to_end * 1000:.0f} ms (median of {ns.runs})")
    print(f"python -c pass (floor)    : {floor * 1000:.0f} ms")
    verdict = "OK" if end_to_end < 1.0 else "SLOW"
    print(f"goal: end to end < 1 s    : {verdict}")
    ratio = suggest_e2e / end_to_end
    print(f"plan --suggest, end to end: {suggest_e2e * 1000:.0f} ms (median of {ns.runs}), "
          f"{ratio:.2f}x plan -r")
    print(f"goal: suggest < 1.5x plan : {'OK' if ratio < 1.5 else 'SLOW'}; < 1 s: "
          f"{'OK' if suggest_e2e < 1.0 else 'SLOW'}")


if __name__ == "__main__":
    main()
