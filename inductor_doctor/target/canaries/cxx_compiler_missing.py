"""Reproducer: does Inductor find a working C++ compiler, and can it build and load a kernel?

Usage: python cxx_compiler_missing.py cpu
Asks torch for its compiler exactly as Inductor does (`CXX`, else g++; torch raises its own error
when that does not run), then builds a trivial shared object with Inductor's own base flags
(optimisation, -march=native, the C++ standard) and loads it. No OpenMP and no Python.h here: those
have their own checks.
"""

import ctypes
import os
import subprocess
import sys
import tempfile

import torch  # noqa: F401  (Inductor's modules expect it imported first)

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if device != "cpu":
    raise SystemExit(f"SKIP: {device}: Inductor's C++ compiler matters for the CPU")

try:
    from torch._inductor import cpp_builder
except ImportError:  # torch < 2.4 keeps the search in codecache
    cpp_builder = None

if cpp_builder is not None:
    cxx = cpp_builder.get_cpp_compiler()
else:
    from torch._inductor import codecache

    cxx = codecache.cpp_compiler()

SOURCE = 'extern "C" int indoc_canary(int x) { return x + 41; }\n'
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "canary.cpp")
    with open(src, "w") as f:
        f.write(SOURCE)
    if cpp_builder is not None and hasattr(cpp_builder, "CppBuilder"):
        builder = cpp_builder.CppBuilder(
            name="canary", sources=[src], BuildOption=cpp_builder.CppOptions(), output_dir=tmp
        )
        print(builder.get_command_line())
        builder.build()
        so = builder.get_target_file_path()
    else:
        so = os.path.join(tmp, "canary.so")
        subprocess.run([cxx, "-O2", "-shared", "-fPIC", src, "-o", so], check=True)
    value = ctypes.CDLL(so).indoc_canary(1)
    assert value == 42, value
try:  # the kernel was built and loaded outside Inductor's cache, where the harness looks: say so
    from indoc_harness import exercised
except ImportError:  # run on its own
    exercised = print
exercised(f"Inductor's C++ compiler {cxx} built a kernel with Inductor's flags, loaded and ran it")
print(f"Inductor's C++ compiler {cxx} built and loaded a kernel")
