"""Benchmark: `explain --log` on a 50 MB CI log, in process and end to end.

Goal: under 2 s for 50 MB. The log is built to be hostile in the ways real ones are: colour codes
on every line, Windows line endings, tqdm progress bars redrawn with `\\r`, thousands of ordinary
Python tracebacks through torch (so `torch`, `Error` and `File` occur everywhere), a few very long
lines, and two real failures buried at 30% and 90% of the way in. Figures from one run:

    python bench/bench_triage.py [--mb 50]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def build(path: Path, megabytes: int) -> int:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=50)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ci.log"
        size = build(log, ns.mb)

        from inductor_doctor.kb import registry
        from inductor_doctor.triage.command import read_log, triage_text

        issues = list(registry())
        start, cpu0 = time.perf_counter(), time.process_time()
        data = read_log(str(log))
        read_s = time.perf_counter() - start
        result = triage_text(data, issues)
        in_process = time.perf_counter() - start
        in_process_cpu = time.process_time() - cpu0

        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "inductor_doctor", "explain", "--log", str(log), "--format", "json"],
            capture_output=True,
            text=True,
        )
        end_to_end = time.perf_counter() - start
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child_cpu = (children1.ru_utime - children0.ru_utime) + (children1.ru_stime - children0.ru_stime)
        if proc.returncode != 0:
            sys.exit(f"explain --log failed ({proc.returncode}): {proc.stderr[-2000:]}")

    found = [(m.issue.id, m.confidence, [e.line for e in m.evidence]) for m in result.matched]
    print(f"log                        : {size / 1e6:.1f} MB, {data.lines:,} lines, {len(issues)} issues")
    print(f"matched                    : {found}")
    print(f"read + decode + normalize  : {read_s:.2f} s")
    print(f"triage, in process         : {in_process:.2f} s wall, {in_process_cpu:.2f} s CPU")
    print(f"explain --log, end to end  : {end_to_end:.2f} s wall, {child_cpu:.2f} s CPU (start-up included)")
    print(f"goal: < 2 s for 50 MB      : {'OK' if end_to_end < 2.0 else 'SLOW'}")
    print("(wall times stretch on a busy machine; the CPU figures are what the work itself costs)")


if __name__ == "__main__":
    main()
