"""Reproducer: compile and launch a one-element Triton kernel on one GPU.

Usage: python triton_ptxas_driver.py cuda:0
Fails with "device kernel image is invalid" when the driver is older than Triton's ptxas.
"""

import sys

import torch
import triton
import triton.language as tl

device = sys.argv[1] if len(sys.argv) > 1 else "cuda:0"
if not device.startswith("cuda"):
    raise SystemExit(f"SKIP: {device} is not a CUDA device")
if not torch.cuda.is_available():
    raise SystemExit("SKIP: torch sees no CUDA device")


@triton.jit
def add_one(ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(ptr + offs, tl.load(ptr + offs, mask=mask) + 1, mask=mask)


x = torch.zeros(1, device=device)
add_one[(1,)](x, 1, BLOCK=16)
torch.cuda.synchronize(device)
assert x.item() == 1.0, f"the kernel ran but wrote {x.item()}"
print(f"Triton kernel ran on {device} ({torch.cuda.get_device_name(device)}, triton {triton.__version__})")
