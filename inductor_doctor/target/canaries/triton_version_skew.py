"""Reproducer: does Inductor's Triton-facing code import (and, with a GPU, compile) here?

Usage: python triton_version_skew.py [toolchain|cuda]
A torch/Triton pair from different releases fails in these imports, e.g. torch 2.6 with
Triton >= 3.3: "cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'".
"""

import importlib

import torch

try:
    import triton  # noqa: F401
except ImportError:
    raise SystemExit("SKIP: triton is not installed") from None

# The modules through which Inductor reaches Triton; each torch release has a subset of them.
MODULES = (
    "torch._inductor.runtime.hints",
    "torch._inductor.runtime.triton_compat",
    "torch._inductor.runtime.triton_heuristics",
    "torch._inductor.codegen.triton",
)

for name in MODULES:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # a module this torch has, failing on something it imports
            raise

if not torch.cuda.is_available():
    # Without a GPU nothing is compiled: a clean import is only part of what skew breaks.
    raise SystemExit("PARTIAL: Inductor's Triton modules import; no GPU to compile a kernel on")
compiled = torch.compile(lambda x: x * 2 + 1)
out = compiled(torch.ones(8, device="cuda"))
torch.cuda.synchronize()
assert out.tolist() == [3.0] * 8, out
print("Inductor's Triton modules import and compile")
