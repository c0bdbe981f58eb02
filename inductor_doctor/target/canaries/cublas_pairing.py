"""Canary for cublas-pairing: half and bfloat16 GEMMs through cuBLAS on one GPU.

pytorch/pytorch#170676's reproducer, `F.linear` of (14, 4096) by (4096, 4096) in float16, and the
same in bfloat16, plus a transposed matmul and a batched one: the calls a model's first layers make,
eager or compiled (Inductor hands matmuls to cuBLAS unless it autotunes them). With a cuBLAS that
does not pair with the torch build they fail with "CUBLAS_STATUS_INVALID_VALUE when calling
cublasGemmEx(...)"; the linear's result is compared with a float32 reference. Milliseconds.

Usage: python cublas_pairing.py cuda[:N]
"""

import sys

import torch
import torch.nn.functional as F

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
if not torch.cuda.is_available():
    raise SystemExit("SKIP: torch.cuda.is_available() is False")
torch.cuda.set_device(torch.device(device))


def gemms(dtype):
    """Each GEMM's name and result, in `dtype`."""
    u = torch.randn((14, 4096), device=device, dtype=dtype)
    v = torch.randn((4096, 4096), device=device, dtype=dtype) / 64
    a = torch.randn((8, 64, 128), device=device, dtype=dtype)
    b = torch.randn((8, 128, 64), device=device, dtype=dtype)
    out = [("linear (14x4096)x(4096x4096)^T", F.linear(u, v)),
           ("matmul (4096x4096)^T x (4096x14)", v.t() @ u.t()),
           ("bmm 8x(64x128)x(128x64)", torch.bmm(a, b))]
    torch.cuda.synchronize()
    torch.testing.assert_close(out[0][1].float(), F.linear(u.float(), v.float()), rtol=5e-2, atol=5e-2)
    return out


ran = []
for dtype in (torch.float16, torch.bfloat16):
    if dtype is torch.bfloat16 and not torch.cuda.is_bf16_supported():
        continue
    ran += [f"{name} in {str(dtype).split('.')[-1]}" for name, _ in gemms(dtype)]
what = f"{len(ran)} cuBLAS GEMMs on {device} ({torch.cuda.get_device_name(device)}): " + "; ".join(ran)
try:
    from indoc_harness import exercised

    exercised(what)
except ImportError:
    print(what)
