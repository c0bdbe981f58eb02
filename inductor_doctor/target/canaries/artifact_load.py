"""Reproducer: load a compiled artifact for real, and run it where it records example inputs.

Usage: INDUCTOR_DOCTOR_ARTIFACT_PATH=PATH [INDUCTOR_DOCTOR_ARTIFACT_KIND=pt2|cache-blob|cache-dir]
       python artifact_load.py cpu|cuda:N

- an AOTInductor package (.pt2): `torch._inductor.aoti_load_package`, then, where the package holds
  its exported program's sample inputs (`data/sample_inputs/`), one call of the model on them;
- a `torch.compiler.save_cache_artifacts()` blob: `torch.compiler.load_cache_artifacts` (what it
  loaded is printed: a cache's hits happen later, in the user's own compile). A blob written by
  another torch (its entries' repro header: `# torch version:`, `# torch git version:`) that loads
  still ends with PARTIAL: its entries are keyed by that torch, and a load says nothing of a hit;
- an Inductor cache directory: every compiled kernel `.so` in it is `dlopen`ed as Inductor does on a
  hit (with torch imported first, whose libraries they link against).
It raises what torch or the loader raises; a load that succeeded without running anything ends
with PARTIAL.
"""

import ctypes
import importlib
import os
import re
import sys
import zipfile

path = os.environ.get("INDUCTOR_DOCTOR_ARTIFACT_PATH", "")
kind = os.environ.get("INDUCTOR_DOCTOR_ARTIFACT_KIND", "")
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if not path:
    raise SystemExit("SKIP: no artifact given (INDUCTOR_DOCTOR_ARTIFACT_PATH)")
if not kind:
    kind = "cache-dir" if os.path.isdir(path) else "pt2" if zipfile.is_zipfile(path) else "cache-blob"

import torch  # noqa: E402


def exercised(what):
    """Tell the doctor's harness what ran: the artifact's own code, which its proof cannot see."""
    try:
        from indoc_harness import exercised as tell
    except ImportError:  # run on its own
        tell = print
    tell(what)


if device.startswith("cuda") and not torch.cuda.is_available():
    raise SystemExit("SKIP: torch sees no CUDA GPU")


def load_pt2():
    import torch._inductor

    if not hasattr(torch._inductor, "aoti_load_package"):
        raise AttributeError(
            "module 'torch._inductor' has no attribute 'aoti_load_package' (torch " + torch.__version__ + ")"
        )
    index = int(device.split(":")[1]) if ":" in device else -1
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    samples = sorted(n for n in names if "/data/sample_inputs/" in n or n.startswith("data/sample_inputs/"))
    models = sorted(
        {n.split("/data/aotinductor/")[1].split("/")[0] for n in names if "/data/aotinductor/" in n}
    )
    model = models[0] if models else "model"
    import inspect

    accepts = inspect.signature(torch._inductor.aoti_load_package).parameters
    kwargs = {"model_name": model} if "model_name" in accepts else {}
    if index >= 0:
        kwargs["device_index"] = index
    runner = torch._inductor.aoti_load_package(path, **kwargs)
    print("loaded", path, "model", model, "with torch", torch.__version__, flush=True)
    if not samples:
        raise SystemExit(
            "PARTIAL: the package loaded (model " + model + "), but it records no example "
            "inputs to run it with"
        )
    from torch.export.pt2_archive._package import load_pt2

    contents = load_pt2(path, run_single_threaded=False)
    ep = contents.exported_programs.get(model)
    if ep is None or ep.example_inputs is None:
        raise SystemExit("PARTIAL: the package loaded; its example inputs could not be read back")
    args, kw = ep.example_inputs
    if index >= 0:
        args = tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in args)
    out = runner(*args, **kw)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    shapes = [
        tuple(o.shape)
        for o in (out if isinstance(out, (list, tuple)) else [out])
        if isinstance(o, torch.Tensor)
    ]
    exercised("the package's model " + model + " loaded and ran on " + device)
    raise SystemExit("OK: loaded and ran model " + model + " on its example inputs: outputs " + str(shapes))


def load_blob():
    if not hasattr(torch.compiler, "load_cache_artifacts"):
        raise AttributeError(
            "module 'torch.compiler' has no attribute 'load_cache_artifacts' (torch "
            + torch.__version__
            + ")"
        )
    # As a compile would have it: torch 2.7's torch.compiler._cache, imported before torch._dynamo,
    # fails on a circular import (cannot import name 'CacheArtifactManager').
    importlib.import_module("torch._dynamo")

    with open(path, "rb") as f:
        data = f.read()
    info = torch.compiler.load_cache_artifacts(data)
    if info is None:
        raise RuntimeError(
            "torch.compiler.load_cache_artifacts returned None: torch "
            + torch.__version__
            + " could not read the blob (see its warning above): every entry of it is compiled again"
        )
    counts = {k: len(v) for k, v in getattr(info, "artifacts", {}).items()}
    exercised("torch " + torch.__version__ + " loaded the cache blob: " + str(counts))
    version = re.search(rb"# torch version: ([^\s\\]+)", data)
    git = re.search(rb"# torch git version: ([0-9a-f]{7,40})", data)
    here = getattr(torch.version, "git_version", "") or ""
    if (version and version.group(1).decode() != torch.__version__) or (
        git and here and git.group(1).decode() != here
    ):
        by = b" ".join(m.group(1) for m in (version, git) if m).decode()
        raise SystemExit(
            "PARTIAL: torch " + torch.__version__ + " loaded the blob " + str(counts) + ", written by torch "
            + by + ": its entries are keyed by that torch, and a load says nothing of a hit"
        )
    raise SystemExit("OK: torch " + torch.__version__ + " loaded the blob: " + str(counts))


def load_dir():
    sos = []
    for root, _dirs, files in os.walk(path):
        sos += [os.path.join(root, f) for f in files if f.endswith(".so")]
    if not sos:
        raise SystemExit("PARTIAL: no compiled kernel (.so) in the cache to load")
    for so in sorted(sos)[:64]:
        ctypes.CDLL(so)
    raise SystemExit(
        "PARTIAL: "
        + str(min(len(sos), 64))
        + " compiled kernels loaded with torch "
        + torch.__version__
        + "; whether they are hit is for the compile that uses them"
    )


{"pt2": load_pt2, "cache-blob": load_blob, "cache-dir": load_dir}[kind]()
