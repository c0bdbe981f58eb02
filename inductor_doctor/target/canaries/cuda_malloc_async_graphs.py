"""Canary for cuda-malloc-async-graphs: CUDA graph trees under the cudaMallocAsync allocator.

With PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (set by the user: the canary inherits it, and
does nothing where torch's own allocator is in use), a small function compiled with
mode="reduce-overhead" is run until Inductor records and replays its CUDA graph. The allocator
refuses the pool check the CUDA graph trees make: "cudaMallocAsync does not yet support
checkPoolLiveAllocations" (pytorch/pytorch#158641). When that happens, the same function is compiled
again with torch._inductor.config.triton.slow_path_cudagraph_asserts off (the check is an assertion)
and the outcome is part of the error message.

Usage: python cuda_malloc_async_graphs.py cuda[:N]
"""

import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
if not torch.cuda.is_available():
    raise SystemExit("SKIP: torch.cuda.is_available() is False")
torch.cuda.set_device(torch.device(device))
backend = torch.cuda.get_allocator_backend()
if backend != "cudaMallocAsync":
    raise SystemExit(f"SKIP: torch's allocator here is {backend}, not cudaMallocAsync")


def f(x):
    return torch.sin(x) * 2 + 1


def run(asserts):
    import torch._inductor.config as inductor_config

    torch._dynamo.reset()
    inductor_config.triton.slow_path_cudagraph_asserts = asserts
    compiled = torch.compile(f, mode="reduce-overhead")
    x = torch.randn(1024, device=device)
    out = None
    for _ in range(4):  # warm-up, record, replay
        out = compiled(x)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, f(x))


try:
    run(asserts=True)
except RuntimeError as exc:
    if "does not yet support" not in str(exc):
        raise
    try:
        run(asserts=False)
        workaround = "clean, the replayed graph matches eager"
    except Exception as again:  # noqa: BLE001 - reported, not hidden
        workaround = "still fails: " + (str(again).strip().splitlines() or [type(again).__name__])[0]
    raise RuntimeError(f"{str(exc).splitlines()[0]} [cudaMallocAsync with mode='reduce-overhead']; with "
                       f"triton.slow_path_cudagraph_asserts=False: {workaround}") from exc
print(f"OK: mode='reduce-overhead' records and replays a CUDA graph under cudaMallocAsync on {device} "
      f"(torch {torch.__version__})")
