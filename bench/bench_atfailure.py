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

    python bench/bench_atfailure.py [--rounds 7] [--gb 1] [--torch] [--against DIR] [--checkout]

`run`'s start-up is timed as a user pays it: the console script of the doctor installed with
`pip install <checkout>` into a new venv (no `.pth` start-up hook of this machine's site-packages is
timed as the doctor's, and its bytecode is compiled, as pip leaves it), beside that venv's own
`python -c pass` and `python -c "import re, sys"` (what pip's console script imports before the doctor's
first line). `--against DIR` installs another checkout (an older commit: `git archive COMMIT |
tar -x -C DIR`) into a second venv and times it in the same rounds: the before and after of one run
(`--run-only` stops there). `--checkout` (or a host where no venv can be made) runs the doctor from
this checkout instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

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
    kw.setdefault("env", ENV)
    start = time.perf_counter()
    subprocess.run(cmd, check=False, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


def cpu_and_wall(cmd: List[str], **kw: object) -> Tuple[float, float]:
    """(CPU seconds of the command and everything it waited for, wall seconds): on a loaded host the
    CPU time is the steadier figure (waiting for a core is not the program's cost); the kernel may
    count it in ticks, so it is averaged over the rounds, not taken as a median."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = wall(cmd, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), took


def install(venv: str, source: str) -> Optional[str]:
    """`pip install SOURCE` into a new venv; its console script, or None (why on stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_TARGET", "PIP_PREFIX",
                                                            "PYTHONDONTWRITEBYTECODE")}
    for step in ([sys.executable, "-m", "venv", venv],
                 [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", source]):
        proc = subprocess.run(step, capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            sys.stderr.write(f"could not install {source} into a new venv: "
                             f"{((proc.stderr or proc.stdout).strip().splitlines() or ['?'])[-1][:200]}\n")
            return None
    return os.path.join(venv, "bin", "inductor-doctor")


def run_overhead(rounds: int, doctors: Dict[str, List[str]], python: str,
                 installed: bool) -> Dict[str, float]:
    """`run -- true` of each doctor against `true`, and the same interpreter's own start (`python -c
    pass`) beside them, interleaved: what is left over that floor is the doctor's (its imports, the
    pipe, the fork). Medians of each round's differences, in seconds."""
    env = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if installed:  # the checkout on PYTHONPATH would be imported instead of what each venv installed
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    names = ["bare", "python", "script", *doctors]
    argv = {"bare": ["true"], "python": [python, "-c", "pass"], "script": [python, "-c", "import re, sys"],
            **{name: [*doctor, "run", "--", "true"] for name, doctor in doctors.items()}}
    times: Dict[str, List[float]] = {name: [] for name in names}
    cpu: Dict[str, List[float]] = {name: [] for name in names}
    for _ in range(rounds):
        for name in names:
            c, w = cpu_and_wall(argv[name], env=env)
            cpu[name].append(c)
            times[name].append(w)
    out = {"bare": statistics.median(times["bare"]), "python": statistics.median(times["python"]),
           "python:cpu": statistics.mean(cpu["python"]), "script:cpu": statistics.mean(cpu["script"])}
    for name in doctors:
        out[name] = statistics.median(times[name])
        out[name + ":over_bare"] = statistics.median(w - b for w, b in zip(times[name], times["bare"]))
        out[name + ":own"] = statistics.median(w - p for w, p in zip(times[name], times["python"]))
        out[name + ":cpu"] = statistics.mean(cpu[name])  # a mean: the kernel may count CPU in ticks
        out[name + ":own_cpu"] = out[name + ":cpu"] - out["python:cpu"]
        out[name + ":doctor_cpu"] = out[name + ":cpu"] - out["script:cpu"]
    return out


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
    ap.add_argument("--against", metavar="DIR",
                    help="another checkout of the doctor, timed in the same rounds")
    ap.add_argument("--checkout", action="store_true", help="time `run` from this checkout, not an install")
    ap.add_argument("--run-only", action="store_true", help="only `run -- true`'s start-up")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="indoc-bench-") as tmp:
        doctors: Dict[str, List[str]] = {}
        python = sys.executable
        script = None if args.checkout else install(os.path.join(tmp, "now"), REPO)
        if script is None:
            subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(REPO, "inductor_doctor")],
                           check=True, stdout=subprocess.DEVNULL)
            doctors["this checkout"] = DOCTOR
            how = f"this checkout with {sys.executable} -m inductor_doctor"
        else:
            doctors["this checkout"] = [script]
            python = os.path.join(os.path.dirname(script), "python")
            how = "console scripts installed into new venvs"
        if args.against:
            other = install(os.path.join(tmp, "against"), os.path.abspath(args.against))
            if other is not None:
                doctors[os.path.basename(os.path.abspath(args.against))] = [other]
        o = run_overhead(args.rounds, doctors, python, installed=script is not None)
        print(f"run -- true: {how}; `true` bare {o['bare'] * 1000:.0f} ms, `python -c pass` "
              f"{o['python'] * 1000:.0f} ms ({o['python:cpu'] * 1000:.0f} ms CPU) (medians of {args.rounds} "
              "interleaved rounds)")
        for name in doctors:
            rows.append((f"run -- true, {name}", f"{o[name]:.3f}s vs {o['bare']:.3f}s",
                         f"+{o[name + ':over_bare'] * 1000:.0f} ms over bare; +{o[name + ':own'] * 1000:.0f} "
                         f"ms over python's start", "<= +50 ms"))
            rows.append((f"  its CPU time, {name}", f"{o[name + ':cpu'] * 1000:.1f} ms",
                         f"+{o[name + ':own_cpu'] * 1000:.1f} ms over python's; the doctor's own "
                         f"{o[name + ':doctor_cpu'] * 1000:.1f} ms", ""))
        print(f"CPU (means): `python -c pass` {o['python:cpu'] * 1000:.1f} ms; the console script's own "
              f"`import re, sys` (pip writes it) brings it to {o['script:cpu'] * 1000:.1f} ms")
    if args.run_only:
        for name, took, ratio, goal in rows:
            print(f"  {name:<32} {took:<26} {ratio:<44} {goal}")
        return
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
