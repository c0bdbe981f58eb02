"""Canary for pytorch/pytorch#136504 (fixed by pytorch/pytorch#136512, torch 2.6.0).

A user-defined @triton.jit kernel whose tl.constexpr argument receives a dynamic size under
torch.compile: before the fix Inductor wrote the SymInt into the generated module's triton_meta
as a bare name, and loading that module failed with `NameError: name 's0' is not defined`.
This is the upstream reproducer with dynamic=True, so the first call already takes the dynamic
path; fla-org/flash-linear-attention#160 is the same bug reached through fla's DeltaNet kernels.

Usage: python triton_constexpr_dynamic.py cuda[:N]
"""

import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
if not device.startswith("cuda"):
    raise SystemExit("SKIP: user-defined Triton kernels need a GPU; got " + device)
if not torch.cuda.is_available():
    raise SystemExit("SKIP: torch.cuda.is_available() is False")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def square_kernel(x_ptr, y_ptr, NUMEL: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = BLOCK_SIZE * pid + tl.arange(0, BLOCK_SIZE)
    mask = offsets < NUMEL
    data = tl.load(x_ptr + offsets, mask)
    tl.store(y_ptr + offsets, data * data, mask)


def fn(x):
    y = torch.empty_like(x)
    block_size = 256
    numel = x.numel()
    square_kernel[(triton.cdiv(numel, block_size),)](x, y, numel, block_size)
    return y


if torch.device(device).index is not None:
    torch.cuda.set_device(torch.device(device))  # the kernel launches on the current device
compiled = torch.compile(fn, dynamic=True)  # numel is a SymInt from the first call on
for n in (256 * 2 + 5, 256 * 3 + 7):  # the sizes of the upstream regression test
    x = torch.randn(n, device=device)
    torch.testing.assert_close(compiled(x), x * x)
print(f"OK: tl.constexpr under dynamic shapes (torch {torch.__version__}, triton {triton.__version__})")
