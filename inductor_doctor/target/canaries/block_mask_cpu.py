"""Canary for pytorch/pytorch#151290 (fixed by pytorch/pytorch#151887).

torch.compile(create_block_mask) on the CPU: the Inductor C++ backend generated code that g++
rejected with "conflicting declaration" on some hosts, in torch 2.8.0 nightlies of April 2025.
This is the upstream unit test (test_flex_attention.py::test_make_block_mask) as a script.

Usage: python block_mask_cpu.py [cpu]
Raises when the bug is present; a C++ compile failure with another cause (no compiler, no omp.h)
is re-raised with that cause in one line, so that it is not mistaken for this bug.
"""

import re
import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if device != "cpu":
    raise SystemExit("SKIP: this check is about the Inductor C++ (CPU) backend")

try:
    from torch.nn.attention.flex_attention import create_block_mask
except ImportError as exc:
    raise SystemExit(f"SKIP: this torch has no flex_attention.create_block_mask ({exc})") from None


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def first_compiler_error(text):
    """The compiler's own first error line: the cause, where Dynamo's message ends with boilerplate."""
    for line in text.splitlines():
        if re.search(r"\b(fatal )?error\b:", line) or "undefined symbol" in line:
            return line.strip()
    return None


try:
    compiled = torch.compile(create_block_mask)(causal_mask, 1, 1, 512, 512, device=device)
except Exception as exc:
    text = str(exc)
    if re.search(r"conflicting declaration", text, re.IGNORECASE):
        raise  # the bug: pytorch#151290
    cause = first_compiler_error(text)
    if cause is None:
        raise
    raise RuntimeError("Inductor's C++ compile failed, for another reason: " + cause) from exc

eager = create_block_mask(causal_mask, 1, 1, 512, 512, device=device)
for name in ("kv_num_blocks", "kv_indices", "q_num_blocks", "q_indices"):
    a, b = getattr(compiled, name, None), getattr(eager, name, None)
    if a is None and b is None:
        continue
    if not torch.equal(a, b):
        raise AssertionError(f"compiled create_block_mask differs from eager in {name}")
print(f"OK: compiled create_block_mask matches eager (torch {torch.__version__})")
