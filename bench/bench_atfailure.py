"""Benchmark: what `run`, the exception hook and `why` cost, as ratios measured in one run.

Goals (issue "at the moment of failure"):

* `run -- CMD` on a command that succeeds: at most 50 ms over running CMD bare (the console
  script's start-up: `run` is read without click, nothing else is imported until a failure);
* `run -- CMD` on a command that writes 1 GB to stdout: the same throughput as bare (stdout is the
  child's own, inherited; the doctor never touches it);
* `import inductor_doctor.hook; install()`: nothing measurable next to the interpreter's start-up;
* `why -- CMD`: a small multiple of one run of CMD per variation run, and fewer runs than variations
  when the first deciding one stops it (`--all` for every one).

Bare and wrapped runs alternate within each round, and each ratio is taken within its round (a shared
host's speed drifts). Figures from one run:

    python bench/bench_atfailure.py [--rounds 7] [--gb 1] [--torch]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCTOR = [sys.executable, "-m", "inductor_doctor"]
ENV = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
FAILING = "import sys; sys.stderr.write('ValueError: a bug of the program\\n'); sys.exit(1)"
COMPILE_BUG = """
import torch
from torch._inductor import lowering
def broken(*args, **kwargs):
    raise NotImplementedError("a lowering that Inductor gets wrong")
lowering.lowerings[torch.ops.aten.sin.default] = broken
@torch.compile
def f(x):
    return x.sin() + 1
print(f(torch.randn(8)).sum().item())
"""


def wall(cmd: List[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=ENV, check=False, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


def run_overhead(rounds: int) -> Dict[str, float]:
    """`run -- true` against `true`, and the interpreter's own start (`python -c pass`) beside them:
    what is left is the doctor's (its imports, the pipe, the fork)."""
    bare, wrapped, interp = [], [], []
    for _ in range(rounds):
        bare.append(wall(["true"]))
        wrapped.append(wall([*DOCTOR, "run", "--", "true"]))
        interp.append(wall([sys.executable, "-c", "pass"]))
    own = [w - b - (p - b) for w, b, p in zip(wrapped, bare, interp)]
    return {"bare": statistics.median(bare), "wrapped": statistics.median(wrapped),
            "python": statistics.median(interp), "own": statistics.median(own)}


def throughput(rounds: int, gb: float) -> Dict[str, float]:
    """Seconds per GB through a pipe, bare and under `run`, each less the same command's cost for
    1 MB (start-up is not throughput); the ratio is taken within each round."""
    n = int(gb * 1024)

    def pipeline(mb: int, wrapped: bool) -> float:
        writer = f"dd if=/dev/zero bs=1M count={mb} status=none"
        doctor = " ".join(DOCTOR) + " run -- " if wrapped else ""
        return wall(["bash", "-c", f"{doctor}{writer} | cat > /dev/null"])

    ratios, bare_s, wrapped_s = [], [], []
    for _ in range(rounds):
        b = pipeline(n, False) - pipeline(1, False)
        w = pipeline(n, True) - pipeline(1, True)
        bare_s.append(b)
        wrapped_s.append(w)
        ratios.append(w / b)
    return {"bare": statistics.median(bare_s), "wrapped": statistics.median(wrapped_s),
            "ratio": statistics.median(ratios), "mb": n}


def hook_cost(rounds: int) -> Dict[str, float]:
    code = ("import time; t = time.perf_counter(); import inductor_doctor.hook as h; h.install(); "
            "print(time.perf_counter() - t)")
    costs, starts = [], []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True,
                             check=True)
        costs.append(float(out.stdout))
        starts.append(wall([sys.executable, "-c", "pass"]))
    probe = ("import sys; b = set(sys.modules); import inductor_doctor.hook as h; h.install(); "
             "print(sorted(set(sys.modules) - b))")
    mods = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True,
                          check=True).stdout.strip()
    return {"import_install": statistics.median(costs), "python": statistics.median(starts),
            "modules": mods}  # type: ignore[dict-item]


def why_cost(program: List[str], extra: List[str]) -> Dict[str, float]:
    one = min(wall(program, capture_output=True) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "why.json")
        took = wall([*DOCTOR, "why", "--quiet", "--format", "json", "--output", out, *extra, "--", *program],
                    capture_output=True)
        with open(out, encoding="utf-8") as fh:
            doc = json.load(fh)
    return {"one_run": one, "why": took, "runs": doc["meta"]["runs"], "variations": doc["meta"]["variations"],
            "jobs": doc["meta"]["jobs"], "kind": doc["conclusion"]["kind"]}  # type: ignore[dict-item]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--gb", type=float, default=1.0, help="stdout volume for the throughput row")
    ap.add_argument("--torch", action="store_true", help="also time `why` on a real torch.compile failure")
    args = ap.parse_args()
    rows = []
    o = run_overhead(args.rounds)
    rows.append(("run -- true (over bare)", f"{o['wrapped']:.3f}s vs {o['bare']:.3f}s",
                 f"+{(o['wrapped'] - o['bare']) * 1000:.0f} ms: python start {o['python'] * 1000:.0f} ms"
                 f" + doctor {o['own'] * 1000:.0f} ms", "<= +50 ms"))
    t = throughput(max(3, args.rounds // 2), args.gb)
    rows.append((f"run: {t['mb']} MB on stdout", f"{t['wrapped']:.3f}s vs {t['bare']:.3f}s (less 1 MB's)",
                 f"{t['ratio']:.3f} x bare", "1.0 x (unchanged)"))
    h = hook_cost(args.rounds)
    rows.append(("hook import + install", f"{h['import_install'] * 1000:.1f} ms",
                 f"{h['import_install'] / h['python'] * 100:.1f}% of python start-up", "not measurable"))
    for extra, label in (([], "why (stops when decided)"), (["--all"], "why --all")):
        w = why_cost([sys.executable, "-c", FAILING], extra)
        rows.append((f"{label}, plain failure", f"{w['why']:.2f}s, {w['runs']} runs of {w['variations'] + 1}",
                     f"{w['why'] / w['one_run']:.1f} x one run ({w['jobs']} at a time)", "small multiple"))
    if args.torch:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(COMPILE_BUG)
        try:
            for extra, label in (([], "why, Inductor bug"), (["--all"], "why --all, Inductor bug")):
                w = why_cost([sys.executable, fh.name], extra)
                rows.append((label, f"{w['why']:.1f}s, {w['runs']} runs of {w['variations'] + 1}",
                             f"{w['why'] / w['one_run']:.1f} x one run ({w['jobs']} at a time)",
                             f"conclusion: {w['kind']}"))
        finally:
            os.unlink(fh.name)
    print(f"modules the hook loads: {h['modules']}")
    for name, took, ratio, goal in rows:
        print(f"  {name:<32} {took:<26} {ratio:<44} {goal}")


if __name__ == "__main__":
    main()
