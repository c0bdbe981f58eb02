"""Canary for pytorch/pytorch#151589 (fixed by pytorch/pytorch#151859).

`x[2:].view(torch.float32) + 1` on a 2050-element bf16 CUDA tensor, compiled: torch 2.8.0
nightlies of 2025-04-08..22 asserted that the bit-cast view (storage offset 1 in fp32 units) was
16-byte aligned and failed at run time with "Expect the tensor to be 16 bytes aligned"
(city96/ComfyUI-GGUF#257). This is the upstream regression test `test_slice_view_dtype`, size 1024.

The generated alignment asserts are switched on explicitly, so the canary judges the installed
torch and not the environment it runs in. When the assertion fires, the same graph is compiled
again with them off (the documented workaround) and the outcome is part of the error message.

Usage: python view_dtype_align.py cuda[:N]
("cpu" runs the same graph, where torch never emits the assertion: only useful to test the canary.)
"""

import sys

import torch
import torch._inductor.config as inductor_config

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
if device.startswith("cuda") and not torch.cuda.is_available():
    raise SystemExit("SKIP: torch.cuda.is_available() is False")
HAS_ASSERTS = hasattr(inductor_config, "alignment_asserts")


def f(x):
    return x[2:].view(dtype=torch.float32) + 1


def run_compiled(x, alignment_asserts):
    torch._dynamo.reset()
    if HAS_ASSERTS:
        inductor_config.alignment_asserts = alignment_asserts
    return torch.compile(f)(x)


x = torch.randn(2050, dtype=torch.bfloat16, device=device)  # (1024 + 1) * 2 elements
expected = f(x)
try:
    out = run_compiled(x, alignment_asserts=True)
except AssertionError as exc:
    lines = [ln.strip() for ln in str(exc).splitlines() if "bytes aligned" in ln]
    if not lines:
        raise
    try:
        torch.testing.assert_close(run_compiled(x, alignment_asserts=False), expected)
        workaround = "clean, the compiled result matches eager"
    except Exception as again:  # noqa: BLE001 - reported, not hidden
        # The first line names the failure ("CUDA error: misaligned address"); CUDA's last lines are
        # boilerplate about TORCH_USE_CUDA_DSA.
        workaround = "still fails: " + (str(again).strip().splitlines() or [type(again).__name__])[0]
    raise AssertionError(
        f"{lines[-1]} [pytorch#151589]; with TORCHINDUCTOR_ALIGNMENT_ASSERTS=0: {workaround}"
    ) from exc
torch.testing.assert_close(out, expected)
print(f"OK: x[2:].view(torch.float32) + 1 compiles and matches eager on {device} (torch {torch.__version__})")
