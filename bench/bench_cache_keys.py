"""Benchmark: what the compile-cache key facts cost a repeated check, and how the fleet view states them.

    python bench/bench_cache_keys.py [--repeat 15] [--hosts 2000]

1. The probe's static stage (`probe.gather`, the stage every `check` runs first) with and without the
   steps of issue 40 (`cache_key`, `remote_caches`, `shared_caches`), each run warm (the second and later
   runs: what a repeated check pays), interleaved, the median of `--repeat`; and the `cache_key` step
   alone. The budget: at most 50 ms added.
2. A fleet of `--hosts` reports made from one real `check --static` report of this machine, 3 hosts
   with TORCHINDUCTOR_MAX_AUTOTUNE=1 and 2 whose torch files differ: the time of the merge, and the
   compile-cache lines the view prints (one per differing input).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OURS = ("cache_key", "remote_caches", "shared_caches")


def probe_costs(repeat: int) -> dict:
    from inductor_doctor import probe
    from inductor_doctor.probe import cache_key

    every = probe.plan()
    without = tuple(s for s in every if s.name not in OURS)
    given = {"python": sys.executable, "environ": dict(os.environ), "step": 30.0, "live_probe": None}
    probe.run_plan(every, given)  # warm: the disk records, the target's self-description
    probe.run_plan(without, given)
    with_ms, without_ms = [], []
    for _ in range(repeat):
        for steps, into in ((every, with_ms), (without, without_ms)):
            start = time.perf_counter()
            probe.run_plan(steps, dict(given))
            into.append((time.perf_counter() - start) * 1000)
    facts = probe.gather()
    args = (facts.python, facts.torch, facts.triton, facts.cuda, facts.cxx, dict(os.environ))
    alone = []
    for _ in range(repeat):
        start = time.perf_counter()
        cache_key.gather(*args)
        alone.append((time.perf_counter() - start) * 1000)
    return {"with_ms": statistics.median(with_ms), "without_ms": statistics.median(without_ms),
            "cache_key_step_ms": statistics.median(alone), "inputs": len(facts.cache_key.inputs)}


AUTOTUNE = {"id": "env:TORCHINDUCTOR_MAX_AUTOTUNE", "label": "TORCHINDUCTOR_MAX_AUTOTUNE", "value": "1",
            "group": "settings", "caches": ["fx-graph", "aot-autograd"], "source": "",
            "effect": "inductor config max_autotune = True",
            "default": "inductor config max_autotune = False"}


def make_fleet(base: dict, hosts: int) -> list:
    """`hosts` reports made from `base` (a real `check` report), `node0000`...: three with
    TORCHINDUCTOR_MAX_AUTOTUNE=1 (node0007 and the two 500 from the end), two whose torch files differ
    (node0042, node0043: the same version, another build). Also what tests/known_issues/test_cache_keys.py
    measures."""
    reports = []
    for n in range(hosts):
        r = copy.deepcopy(base)
        r["environment"]["host"]["hostname"] = f"node{n:04d}"
        inputs = r["environment"]["cache_key"]["inputs"]
        if n in (7, hosts - 500, hosts - 499):
            inputs.append(dict(AUTOTUNE))
        if n in (42, 43):
            for i in inputs:
                if i["id"] == "torch":
                    i["value"] = re.sub(r"files \w+", "files 0123456789abcdef", i["value"])
        reports.append(r)
    return reports


def fleet_lines(hosts: int) -> dict:
    from inductor_doctor.fleet.document import build_document
    from inductor_doctor.render.fleet_cache import cache_lines

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "check.json"
        cmd = [sys.executable, "-m", "inductor_doctor", "check", "--static", "--only", "torch-missing",
               "--format", "json", "--output", str(out)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT, env=env)
        base = json.loads(out.read_text())
    reports = make_fleet(base, hosts)
    start = time.perf_counter()
    doc = build_document(reports).to_dict()
    took = time.perf_counter() - start
    return {"hosts": hosts, "merge_s": took, "lines": cache_lines(doc)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--hosts", type=int, default=2000)
    args = parser.parse_args()
    costs = probe_costs(args.repeat)
    added = costs["with_ms"] - costs["without_ms"]
    print(f"probe, static stage, warm: {costs['with_ms']:.1f} ms with the key facts, "
          f"{costs['without_ms']:.1f} ms without: {added:+.1f} ms (budget 50 ms); the cache_key step alone "
          f"{costs['cache_key_step_ms']:.1f} ms, {costs['inputs']} inputs")
    fleet = fleet_lines(args.hosts)
    print(f"merge of {fleet['hosts']} reports: {fleet['merge_s']:.1f} s; the compile-cache lines:")
    for line in fleet["lines"]:
        print("  | " + line)
    return 0 if added <= 50 else 1


if __name__ == "__main__":
    sys.exit(main())
