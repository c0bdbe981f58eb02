"""Benchmark: `explain --log` on a long log, against a one-regex-per-line pass over the same file.

Goals (issue: triage streams): peak memory at most 150 MB whatever the log's size, and at most
twice the time of the simplest streaming pass there is, `for line in file: regex.search(line)`,
over the same file, measured in the same run (a ratio, so a busy machine moves both sides).

Two shapes of log:

* `distinct` (default, 200 MB): a training run's log in which no two lines are the same (a step
  counter, losses, timings), an ordinary Python traceback through torch every 50 lines, a very
  long line now and then, and one compile error at the end: what a log that triage cannot
  shorten by its repetitions looks like;
* `ci` (50 MB): the hostile CI log of before: colour codes on every line, Windows line endings,
  tqdm bars redrawn with `\\r`, thousands of identical tracebacks, two failures at 30% and 90%.

Each side runs in its own process; its peak RSS is read from the kernel when it exits
(`os.wait4`'s rusage), so the figures are the processes' own, start-up included:

    python bench/bench_triage.py [--shape distinct|ci] [--mb N] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

TRACEBACK = (
    "Traceback (most recent call last):\r\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 465, in _fn\r\n'
    "    return fn(*args, **kwargs)\r\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1736,'
    " in _call_impl\r\n"
    "    return forward_call(*args, **kwargs)\r\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x4)\r\n"
)
STEP = (
    "\x1b[32m2026-11-22 07:00:{s:02d}\x1b[0m INFO train step {i} loss=0.{l:04d} lr=3e-4 grad_norm=1.{g}\r\n"
)
BAR = "".join(
    f"\r{p:3d}%|{'█' * (p // 10):<10}| {p}/100 [00:0{p // 40}<00:03, 31.4it/s]" for p in range(0, 101, 5)
)
LONG = "W1122 " + "{'key': 'value', 'torch': 'compiled', 'shape': [1, 2, 3]} " * 2000 + "\r\n"
FAILURES = [
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\r\n"
    "\x1b[1;31mNameError: name 's2' is not defined\x1b[0m\r\n",
    "AssertionError:\r\nError in op: torch.ops.aten.view.dtype\r\n"
    "Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=4\r\n",
]

D_STEP = (
    "[rank0]:2026-11-22 07:{m:02d}:{s:02d},{ms:03d} INFO trainer.py:412 step={i} epoch={e} "
    "loss={loss:.6f} lr={lr:.3e} grad_norm={g:.4f} tokens_per_s={t} mem_gb={mem:.2f}\n"
)
D_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line {a}, in _call_impl\n'
    "    return forward_call(*args, **kwargs)  # call {i}\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied ({i}x8 and 16x{b})\n"
)
D_LONG = "[rank0]: config {i}: " + "{{'key': 'value', 'torch': 'compiled', 'shape': [1, 2, 3]}} " * 500 + "\n"
D_FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/_inductor/compile_fx.py", line 1421,'
    " in compile_fx\n"
    "    return compile_fx_inner(*args, **kwargs)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/_inductor/codecache.py", line 2205, in load\n'
    "    raise CppCompileError(cmd, output) from e\n"
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "CppCompileError: C++ compile error\n\n"
    "Output:\n"
    "/tmp/torchinductor_root/2x/c2xyz.cpp:4:10: fatal error: 'omp.h' file not found\n"
    "    4 | #include <omp.h>\n"
    "      |          ^~~~~~~\n"
    "1 error generated.\n"
)
#: What the baseline pass looks for on each line: one real signature (triton-constexpr-dynamic's).
BASELINE_PATTERN = rb"NameError: name '[su]\d+' is not defined"


def build_ci(path: Path, megabytes: int) -> int:
    target = megabytes * 1024 * 1024
    marks = [int(target * 0.3), int(target * 0.9)]
    written, i = 0, 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("PyTorch version: 2.5.1+cu124\r\n")
        while written < target:
            if i % 50 == 0:
                chunk = TRACEBACK
            elif i % 997 == 0:
                chunk = LONG
            elif i % 7 == 0:
                chunk = BAR + "\r\n"
            else:
                chunk = STEP.format(s=i % 60, i=i, l=i % 9973, g=i % 10)
            if marks and written >= marks[0]:
                chunk += FAILURES[len(FAILURES) - len(marks)]
                marks.pop(0)
            fh.write(chunk)
            written += len(chunk.encode("utf-8"))
            i += 1
    return path.stat().st_size


def build_distinct(path: Path, megabytes: int) -> int:
    """No two lines alike (each carries its step), one compile error at the very end."""
    target = megabytes * 1024 * 1024
    written, i = 0, 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("PyTorch version: 2.5.1+cu124\n")
        parts: List[str] = []
        while written < target:
            if i % 50 == 49:
                chunk = D_TRACEBACK.format(a=1000 + i % 997, i=i, b=i % 113)
            elif i % 4999 == 4998:
                chunk = D_LONG.format(i=i)
            else:
                chunk = D_STEP.format(
                    m=i // 60000 % 60, s=i // 1000 % 60, ms=i % 1000, i=i, e=i // 10007,
                    loss=2.0 / (1 + i * 1e-4), lr=3e-4 * (1 - i * 1e-8), g=1 + (i % 977) / 977,
                    t=120000 + i % 7919, mem=40 + (i % 311) / 100,
                )
            parts.append(chunk)
            written += len(chunk)
            i += 1
            if len(parts) >= 4096:
                fh.write("".join(parts))
                parts.clear()
        fh.write("".join(parts) + D_FAILURE)
    return path.stat().st_size


BASELINE = f"""
import re, sys
rx = re.compile({BASELINE_PATTERN!r}, re.IGNORECASE)
n = 0
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        if rx.search(line):
            n += 1
print(n)
"""


def measure(cmd: List[str]) -> Tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS MB, exit code, stdout) of one process, from the kernel's rusage."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=("distinct", "ci"), default="distinct")
    ap.add_argument("--mb", type=int, default=None, help="log size (default: 200 distinct, 50 ci)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each side")
    ap.add_argument("--log", type=Path, default=None, help="keep the generated log here (reused if present)")
    ns = ap.parse_args()
    mb = ns.mb or (200 if ns.shape == "distinct" else 50)
    with tempfile.TemporaryDirectory() as tmp:
        log = ns.log or Path(tmp) / f"{ns.shape}.log"
        if not log.exists():
            size = (build_distinct if ns.shape == "distinct" else build_ci)(log, mb)
        size = log.stat().st_size
        triage_cmd = [sys.executable, "-m", "inductor_doctor", "explain", "--log", str(log)]
        triage_cmd += ["--format", "json"]
        base_cmd = [sys.executable, "-c", BASELINE, str(log)]
        best = {"triage": (1e9, 1e9, 0.0), "baseline": (1e9, 1e9, 0.0)}
        document = None
        for _ in range(ns.rounds):
            for name, cmd in (("baseline", base_cmd), ("triage", triage_cmd)):
                wall, cpu, peak, rc, out = measure(cmd)
                if name == "triage":
                    if rc not in (0, 1):
                        sys.exit(f"explain --log failed ({rc})")
                    document = json.loads(out)
                w, c, p = best[name]
                best[name] = (min(w, wall), min(c, cpu), max(p, peak))
    assert document is not None
    found = [
        (r["id"], r["confidence"], [e["line"] for e in r["evidence"]])
        for r in document["results"]
        if r["confidence"] != "version-only"
    ]
    (tw, tc, tp), (bw, bc, bp) = best["triage"], best["baseline"]
    lines = document["environment"]["log"]["lines"]
    print(f"log                       : {ns.shape}, {size / 1e6:.1f} MB, {lines:,} lines")
    print(f"matched                   : {found}")
    print(f"one regex per line        : {bw:.2f} s wall, {bc:.2f} s CPU, peak {bp:.0f} MB")
    print(f"explain --log, end to end : {tw:.2f} s wall, {tc:.2f} s CPU, peak {tp:.0f} MB (with start-up)")
    print(f"ratio (CPU)               : {tc / bc:.2f}  (goal <= 2.0: {'OK' if tc / bc <= 2.0 else 'SLOW'})")
    print(f"ratio (wall)              : {tw / bw:.2f}")
    print(f"peak                      : {tp:.0f} MB  (goal <= 150 MB: {'OK' if tp <= 150 else 'OVER'})")
    print(f"(best of {ns.rounds} interleaved rounds; on a busy machine the CPU figures are the work's cost)")


if __name__ == "__main__":
    main()
