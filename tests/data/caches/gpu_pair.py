"""One pair of "hosts" on a GPU machine (tests/gpu_caches.sh): host A compiles a GPU function into a cache
directory, host B compiles it again into the same directories with one input changed; the doctor's
reports of both are merged. Prints one JSON object: what B's FX graph cache did, how many Triton
kernels B had to compile anew (kernel directories its run added to the shared Triton cache), and the
merge's compile-cache lines. `python gpu_pair.py OUT NAME=VALUE ...` (B's changes; `NAME=` unsets).
Run from the checkout's root with the doctor on PYTHONPATH."""

import json
import os
import subprocess
import sys

out = os.path.abspath(sys.argv[1])
changes = dict(arg.split("=", 1) for arg in sys.argv[2:])
os.makedirs(out, exist_ok=True)
PROGRAM = r'''
import json, torch
from torch._dynamo.utils import counters
def f(x, y):
    return (x.sin() + y.cos()).relu() * 2
torch.compile(f)(torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda"))
torch.cuda.synchronize()
print("COUNTERS " + json.dumps({k: v for k, v in counters["inductor"].items() if "cache" in k}))
'''
shared = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(out, "inductor"),
          "TRITON_CACHE_DIR": os.path.join(out, "triton")}


def kernels():
    folder = shared["TRITON_CACHE_DIR"]
    return set(os.listdir(folder)) if os.path.isdir(folder) else set()


def host(name, extra):
    env = dict(os.environ, **shared)
    for k, v in extra.items():
        if v:
            env[k] = v
        else:
            env.pop(k, None)
    before = kernels()
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env,
                          timeout=1800)
    counters = {}
    for line in proc.stdout.splitlines():
        if line.startswith("COUNTERS "):
            counters = json.loads(line[len("COUNTERS "):])
    after = kernels()
    report = os.path.join(out, name + ".json")
    subprocess.run([sys.executable, "-m", "inductor_doctor", "check", "--only", "remote-cache-unusable",
                    "--format", "json", "--output", report], env=env, capture_output=True, timeout=1800)
    data = json.load(open(report))
    data["environment"]["host"]["hostname"] = "node-" + name
    json.dump(data, open(report, "w"))
    return {"counters": counters, "new_triton_kernels": len(after - before), "error": proc.stderr[-2000:]
            if not counters else ""}


a = host("a", {})
b = host("b", changes)
merged = subprocess.run([sys.executable, "-m", "inductor_doctor", "merge", "--format", "json",
                         os.path.join(out, "a.json"), os.path.join(out, "b.json")],
                        capture_output=True, text=True, env=dict(os.environ, COLUMNS="200"))
keys = json.loads(merged.stdout)["cache_keys"] if merged.stdout.strip() else {}
from inductor_doctor.render.fleet_cache import cache_lines  # noqa: E402

print(json.dumps({"changes": changes, "a": a, "b": b,
                  "predicted_differences": [d["id"] for d in keys.get("differences", [])],
                  "lines": cache_lines({"cache_keys": keys})}, indent=1))
