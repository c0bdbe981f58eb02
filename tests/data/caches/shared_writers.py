"""The cut-off save of cache-shared-writers, with the torch running it (Python 3.8 syntax).

    python shared_writers.py save PATH [LIMIT]   compile a function through standalone_compile (as vLLM's
                                                 backend does, on Dynamo's graph) and save its artifact at
                                                 PATH; with LIMIT, under a file-size limit of LIMIT bytes
                                                 (what a full disk or quota does to a writer)
    python shared_writers.py load PATH           load the artifact at PATH

Each prints one line: `saved N bytes`, `save failed: ...`, `loaded N bytes`, `load failed: ...`, and a
failed load its traceback on stderr.
"""

import importlib
import os
import sys
import traceback

import torch

mode, path = sys.argv[1], sys.argv[2]
artifacts = importlib.import_module("torch._inductor.standalone_compile")
if mode == "save":
    import torch._inductor

    made = []

    def backend(gm, example_inputs):
        art = torch._inductor.standalone_compile(gm, example_inputs)
        made.append(art)
        return art

    def f(x, y):
        return (x.sin() + y.cos()).relu() * 2

    torch.compile(f, backend=backend)(torch.randn(64), torch.randn(64))
    if len(sys.argv) > 3:
        import resource

        limit = int(sys.argv[3])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        made[0].save(path=path, format="binary")
        print(f"saved {os.path.getsize(path)} bytes")
    except OSError as exc:
        print(f"save failed: {exc}")
elif mode == "load":
    try:
        artifacts.CompiledArtifact.load(path=path, format="binary")
        print(f"loaded {os.path.getsize(path)} bytes")
    except Exception as exc:
        traceback.print_exc()
        print(f"load failed: {type(exc).__name__}: {exc}")
