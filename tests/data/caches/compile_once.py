"""One "host" of the compile-cache tests: compiles a small function once and prints Inductor's cache
counters as one JSON line (`COUNTERS {...}`): `fxgraph_cache_hit` where the FX graph cache (local or
remote) held the graph, `fxgraph_cache_miss` where it was compiled. `python compile_once.py [VARIANT]`:
VARIANT 2 compiles another function (a key no host has written). Python 3.8 syntax."""

import json
import sys

import torch
from torch._dynamo.utils import counters

variant = sys.argv[1] if len(sys.argv) > 1 else "1"


def f(x, y):
    return (x.sin() + y.cos()).relu() * 2


def g(x, y):
    return (x.cos() - y.sin()).relu() * 3


fn = g if variant == "2" else f
torch.compile(fn)(torch.randn(64), torch.randn(64))
said = {k: v for k, v in counters["inductor"].items() if "cache" in k}
print("COUNTERS " + json.dumps(said, sort_keys=True))
