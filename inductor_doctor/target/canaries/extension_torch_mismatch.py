"""Canary for extension-torch-mismatch: the installed packages with compiled torch extensions import.

A prebuilt extension built for another torch fails at import (the loader's `undefined symbol:
_ZN3c10...`), runs without its ops (`operator torchvision::nms does not exist`), aborts in
torch.ops.load_library, or skips its library with a warning (torchao, xformers). This imports each
installed package of a known list the way a program does, each in a child interpreter of its own
(an abort kills only the child), with Python's warnings and logging on stderr, and uses the ops
where one call is cheap (torchvision's nms on two boxes). It raises with every package that failed
or disabled its library, the loader's reason included; packages that are not installed are not
tried. vLLM is left out: its import starts far more than its library.

Usage: python extension_torch_mismatch.py [toolchain]
"""

import json
import os
import subprocess
import sys

CHILD_FLAG = "--one"
CHILD_TIMEOUT_S = 90
#: distribution -> (the module whose import loads its compiled library, the name of a cheap call
#: of its ops in CALLS or ""). Names, never code: the child imports the module and calls a function.
PACKAGES = (
    ("torchvision", "torchvision", "torchvision_nms"),
    ("torchaudio", "torchaudio", ""),
    ("torchao", "torchao", ""),
    ("xformers", "xformers.ops", ""),
    ("flash-attn", "flash_attn", ""),
    ("fbgemm-gpu", "fbgemm_gpu", ""),
    ("fbgemm-gpu-cpu", "fbgemm_gpu", ""),
    ("fbgemm-gpu-genai", "fbgemm_gpu", ""),
    ("torchcodec", "torchcodec.decoders", ""),
    ("sageattention", "sageattention", ""),
    ("torch-scatter", "torch_scatter", ""),
    ("torch-sparse", "torch_sparse", ""),
    ("torch-cluster", "torch_cluster", ""),
    ("pyg-lib", "pyg_lib", ""),
    ("detectron2", "detectron2._C", ""),
    ("pytorch3d", "pytorch3d._C", ""),
)


def torchvision_nms(torch):
    """torchvision's nms on two boxes: the op its compiled library registers."""
    import torchvision

    torchvision.ops.nms(torch.tensor([[0., 0., 1., 1.], [0., 0., 1., 1.]]), torch.tensor([1., .5]), .5)


CALLS = {"torchvision_nms": torchvision_nms}
#: What a package says when it disables its own compiled library (torchao/__init__.py,
#: xformers/_cpp_lib.py) instead of raising.
SKIPPED = ("Skipping import of cpp extensions", "can't load C++/CUDA extensions")


def installed():
    from importlib import metadata

    out = []
    for dist, module, call in PACKAGES:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        if all(d != dist for d, _, _, _ in out) and all(m != module for _, _, m, _ in out):
            out.append((dist, version, module, call))
    return out


def one(module, call):
    """In the child: import torch, then the package's module, then its call; report what was said."""
    import importlib
    import logging
    import warnings

    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("always")
    import torch

    importlib.import_module(module)
    if call:
        CALLS[call](torch)
    print(json.dumps({"torch": torch.__version__}), flush=True)


#: The lines that name a cause, best first: the loader's reason, then what the package said.
TELLING = ("undefined symbol", "does not exist", "cannot open shared object", "Fatal Python error",
           *SKIPPED, "built for", "Could not load", "Error")


def chained(text):
    """The lines of a child's output that name the cause (the loader's reason first), not its frames."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    ranked = []
    for line in lines:
        rank = next((i for i, w in enumerate(TELLING) if w in line), None)
        seen = any(line == r[1] for r in ranked)
        if rank is not None and not seen and not line.startswith(("File ", "Traceback")):
            ranked.append((rank, line))
    ranked.sort(key=lambda r: r[0])
    return [line for _, line in ranked[:4]]


def main():
    if len(sys.argv) > 2 and sys.argv[2] == CHILD_FLAG:
        one(sys.argv[3], sys.argv[4])
        return
    found = installed()
    if not found:
        raise SystemExit("SKIP: none of the packages with compiled torch extensions that this canary "
                         "imports is installed")
    failed, fine = [], []
    for dist, version, module, call in found:
        try:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "toolchain", CHILD_FLAG, module, call],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            failed.append(f"{dist} {version}: `import {module}` did not finish in {CHILD_TIMEOUT_S}s")
            continue
        out = proc.stdout + proc.stderr
        skipped = [w for w in SKIPPED if w in out]
        if proc.returncode != 0 or skipped:
            how = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                   else f"exit {proc.returncode}" if proc.returncode else "it disabled its library")
            failed.append(f"{dist} {version}: `import {module}` failed ({how}): " + " | ".join(chained(out)))
        else:
            fine.append(f"{dist} {version}" + (" (its ops ran)" if call else ""))
    if failed:
        raise RuntimeError("packages with compiled torch extensions that do not load here:\n"
                           + "\n".join(failed))
    what = "imported " + ", ".join(fine) + " with their compiled libraries"
    try:
        from indoc_harness import exercised

        exercised(what)
    except ImportError:
        print(what)


if __name__ == "__main__":
    main()
