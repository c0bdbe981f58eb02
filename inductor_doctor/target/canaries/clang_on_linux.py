"""Reproducer: compile and run a small CPU graph with Inductor when its compiler is clang.

Usage: CXX=clang++ python clang_on_linux.py cpu
A full CPU torch.compile (tens of seconds): it builds, loads and runs a real kernel, which is where
clang-only failures show (unknown GCC flags, undefined libstdc++ symbols at load time).
"""

import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if device != "cpu":
    raise SystemExit(f"SKIP: {device}: this concerns Inductor's CPU backend")

try:
    from torch._inductor.cpp_builder import get_cpp_compiler
except ImportError:  # torch < 2.4
    from torch._inductor.codecache import cpp_compiler as get_cpp_compiler

cxx = get_cpp_compiler()
if "clang" not in cxx:
    raise SystemExit(f"SKIP: Inductor's compiler is {cxx}, not clang")


def fn(x, s):
    return (x.sin() * 2 + 1).sum() + len(s)


compiled = torch.compile(fn)
x = torch.arange(16, dtype=torch.float32)
got = compiled(x, "inductor")
want = fn(x, "inductor")
assert torch.allclose(got, want), (got, want)
print(f"Inductor compiled and ran a CPU kernel with {cxx}")
