"""The cross-target canary: compiles the canary kernels for a GPU that is not here, down to the binary.

Run by the target interpreter through the harness (`harness.py cross_compile.py sm_80 triton`), never
imported by the doctor. A GPU-less machine (a `docker build`, CI) still has Triton's whole back end:
`triton.compile(ASTSource(...), target=GPUTarget("cuda", 80, 32))` runs TTIR, TTGIR, LLVM IR, PTX and
the very ptxas Triton would run for that GPU, to a cubin (for `hip`, AMDGCN to an hsaco, the linker
included). What fails there fails the same way on the GPU: an assembler that does not know the
architecture, a dtype the architecture lacks (`type fp8e4nv not supported in this architecture`).
What it cannot show is loading and launching: a clean compile is "compiled for sm_80", never "runs
on sm_80".

The doctor says which GPU in $INDUCTOR_DOCTOR_XTARGET, as Triton names it: `cuda 80 32` or
`hip gfx942 64` (backend, architecture, warp size), with the GPU's shared memory per block in
$INDUCTOR_DOCTOR_XTARGET_SMEM (bytes; none: not judged) and the kernels to compile in
$INDUCTOR_DOCTOR_XTARGET_KERNELS (comma-separated; none: all). Each kernel's outcome is one JSON
line after MARKER, printed as soon as it is known, so that a compiler that kills the process still
leaves the kernels before it:

    {"kernel": "fp8e4nv", "status": "compiled" | "failed" | "skipped", "binary": "cubin",
     "bytes": 4968, "shared": 0, "ptx": {"version": "8.8", "target": "sm_80"},
     "tools": [{"tool": "ptxas", "path": "...", "release": "12.9", "args": ["--gpu-name", "sm_80"]}],
     "exc_type": "...", "error": "..."}

and a last line {"done": true, "triton": "3.9.0", "target": {...}}. Which assembler and linker
Triton ran is seen, not assumed: every program Triton starts while compiling is recorded
(`subprocess.Popen`), and each is asked its `--version` once.

A kernel that compiles but needs more shared memory per block than the GPU has raises Triton's own
`OutOfResources` (the check Triton makes when it loads the kernel on the GPU), with the GPU's limit.

Usage on its own: INDUCTOR_DOCTOR_XTARGET="cuda 80 32" python cross_compile.py sm_80
Python 3.8 syntax; the standard library and Triton (3.0 or newer: `GPUTarget`).
"""

import json
import os
import re
import shlex
import subprocess
import sys
import time
import traceback

MARKER = "@@INDUCTOR_DOCTOR_XTARGET@@"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    """The plainest kernel: what every Triton kernel needs from the architecture and its assembler."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


@triton.jit
def cast_fp8e4nv(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """x.to(torch.float8_e4m3fn): fp8 scaled matmuls, fp8 weights (ComfyUI, torchao, vLLM)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(tl.float8e4nv), mask=mask)


@triton.jit
def cast_fp8e5(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """x.to(torch.float8_e5m2): the fp8 format Triton supports on every NVIDIA GPU it supports."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(tl.float8e5), mask=mask)


@triton.jit
def bf16_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    """A bfloat16 tile product with a bfloat16 result: bf16 arithmetic, conversion and tensor cores."""
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], (tl.dot(a, b) + 1.0).to(tl.bfloat16))


@triton.jit
def mm_a100(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A matmul tile as tuned on an A100: 128x128x64 fp16, 5 stages, 8 warps (131072 bytes of shared
    memory there: 'Required: 131072, Hardware limit: 101376' on an RTX 30xx/40xx, triton-lang/triton#8182)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


#: name -> (kernel, signature of its arguments in order, constexpr values, arguments known to be
#: 16-byte aligned (as Triton specialises them at a launch), compile options, what it is in a sentence).
#: The order is the order they compile in: the plainest first, so that a compiler that kills the
#: process on a later one has already answered for the architecture.
KERNELS = {
    "add_one": (add_one, ["*fp32", "i32"], {"BLOCK": 128}, (0, 1), {}, "a plain fp32 kernel"),
    "fp8e4nv": (cast_fp8e4nv, ["*fp32", "*fp8e4nv", "i32"], {"BLOCK": 128}, (0, 1, 2), {},
                "a cast to float8_e4m3fn (fp8e4nv)"),
    "fp8e5": (cast_fp8e5, ["*fp32", "*fp8e5", "i32"], {"BLOCK": 128}, (0, 1, 2), {},
              "a cast to float8_e5m2 (fp8e5)"),
    "bf16": (bf16_dot, ["*bf16", "*bf16", "*bf16"], {"BLOCK": 32}, (0, 1, 2), {}, "a bfloat16 tl.dot"),
    "smem_a100": (mm_a100, ["*fp16", "*fp16", "*fp16", "i32", "i32", "i32", "i32"],
                  {"BM": 128, "BN": 128, "BK": 64}, (0, 1, 2, 3, 4, 5, 6), {"num_stages": 5, "num_warps": 8},
                  "an A100-tuned fp16 matmul tile (128x128x64, 5 stages)"),
}


def emit(d):
    sys.stdout.write("\n" + MARKER + " " + json.dumps(d) + "\n")
    sys.stdout.flush()


# --- what Triton runs: every program started while compiling, recorded -----------------------------

STARTED = []


def _record_programs():
    """Wrap subprocess.Popen so that the assembler and linker Triton runs are seen, not assumed."""
    original = subprocess.Popen.__init__

    def init(self, args, *a, **kw):
        try:
            if isinstance(args, bytes):
                args_ = args.decode("utf-8", "replace")
            else:
                args_ = args
            # Triton 3.0/3.1 run ptxas as one shell string
            argv = shlex.split(args_) if isinstance(args_, str) else [str(x) for x in args_]
            if argv:
                STARTED.append(argv)
        except Exception:  # noqa: BLE001 - recording is a bonus, never the compile's failure
            pass
        return original(self, args, *a, **kw)

    subprocess.Popen.__init__ = init
    return original


RELEASE = re.compile(r"release (\d+\.\d+)")
_VERSIONS = {}


def _tool_version(path):
    """`ptxas --version`'s release ("12.9"), asked once per binary, with the real Popen."""
    if path in _VERSIONS:
        return _VERSIONS[path]
    release = None
    try:
        proc = subprocess.Popen([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = proc.communicate(timeout=30)[0].decode("utf-8", "replace")
        found = RELEASE.search(out)
        release = found.group(1) if found else (out.strip().splitlines() or [None])[-1]
    except Exception:  # noqa: BLE001
        release = None
    _VERSIONS[path] = release
    return release


def _tools(argvs):
    """The assemblers and linkers among the programs started to build the binary (ptxas, whatever
    its name, and ld.lld), each once; Triton's own `ptxas --version` questions are not builds."""
    out = []
    for argv in argvs:
        name = os.path.basename(argv[0])
        if "--version" in argv[1:] or any(t["path"] == argv[0] for t in out):
            continue
        if name.startswith("ptxas") or name in ("ld.lld", "lld"):
            args = [a for a in argv[1:] if a.startswith("--gpu-name") or a.startswith("-arch")
                    or a.startswith("sm_")]
            for i, a in enumerate(argv[1:-1], 1):
                if a in ("--gpu-name", "-arch"):
                    args.append(argv[i + 1])
            out.append({"tool": name, "path": argv[0], "release": _tool_version(argv[0]),
                        "args": args})
    return out


# --- one compile, as each Triton release spells it ---------------------------------------------------


def _target(spec):
    backend, arch, warp = spec.split()
    from triton.backends.compiler import GPUTarget

    return GPUTarget(backend, int(arch) if backend == "cuda" else arch, int(warp))


def _source(fn, types, constexprs, aligned):
    """An ASTSource for 3.3 and later (constexprs named, attrs by index), 3.2 (constants, an
    AttrsDescriptor from hints) or 3.0/3.1 (AttrsDescriptor fields)."""
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    params = [n for n in names if n not in constexprs]
    code = ASTSource.__init__.__code__
    if "constexprs" in code.co_varnames[: code.co_argcount]:  # 3.3+
        signature = dict(zip(params, types))
        signature.update({k: "constexpr" for k in constexprs})
        attrs = {(names.index(params[i]),): [["tt.divisibility", 16]] for i in aligned}
        return ASTSource(fn, signature, constexprs, attrs)
    hints = {names.index(params[i]): 16 for i in aligned}
    try:  # 3.2
        from triton.backends.compiler import AttrsDescriptor
    except ImportError:  # 3.0, 3.1: by index, in the compiler module
        from triton.compiler.compiler import AttrsDescriptor

        signature = {names.index(p): t for p, t in zip(params, types)}
        constants = {names.index(k): v for k, v in constexprs.items()}
        return ASTSource(fn, signature, constants, AttrsDescriptor(divisible_by_16=set(hints)))
    signature = {p: t for p, t in zip(params, types)}
    return ASTSource(fn, signature, dict(constexprs), AttrsDescriptor.from_hints(hints))


def _ptx_header(asm):
    ptx = asm.get("ptx")
    if not isinstance(ptx, str):
        return None
    version = re.search(r"^\.version\s+(\S+)", ptx, re.M)
    target = re.search(r"^\.target\s+(\S+)", ptx, re.M)
    return {"version": version.group(1) if version else None, "target": target.group(1) if target else None}


def _out_of_resources(shared, limit):
    """Triton's own OutOfResources, as its loader raises it on a GPU with `limit` bytes per block."""
    try:
        from triton.runtime.errors import OutOfResources
    except ImportError:  # 3.0 and 3.1 keep it in the autotuner
        from triton.runtime.autotuner import OutOfResources
    return OutOfResources(shared, limit, "shared memory")


def _message(exc):
    """The message and its causes: Triton 3.0/3.1's CompilationError quotes the kernel's source and
    leaves the reason ("fp8e4nv data type is not supported on CUDA arch < 89") to its cause."""
    parts = [str(exc)]
    seen = {id(exc)}
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen and len(parts) < 4:
        seen.add(id(cause))
        parts.append(type(cause).__name__ + ": " + str(cause))
        cause = cause.__cause__ or cause.__context__
    return "\n".join(p for p in parts if p.strip())


def _clip(text, head=700, tail=800):
    """Both ends of a long message (ptxas repeats one error per PTX line; the cause may be first or
    last): a lean line, so that the canary cache keeps every kernel's."""
    return text if len(text) <= head + tail else text[:head] + "\n[...]\n" + text[-tail:]


def compile_one(name, spec, smem_limit):
    fn, types, constexprs, aligned, options, what = KERNELS[name]
    result = {"kernel": name, "what": what}
    start = time.monotonic()
    del STARTED[:]
    try:
        compiled = triton.compile(_source(fn, types, constexprs, aligned), target=_target(spec),
                                  options=dict(options))
        asm = getattr(compiled, "asm", {}) or {}
        binary = next((k for k in ("cubin", "hsaco") if asm.get(k)), None)
        shared = int(getattr(compiled.metadata, "shared", 0) or 0)
        result.update(status="compiled", binary=binary, bytes=len(asm[binary]) if binary else 0,
                      shared=shared, stages=sorted(k for k in asm), ptx=_ptx_header(asm))
        if not binary:
            result.update(status="failed", exc_type="RuntimeError",
                          error="Triton returned no cubin or hsaco for this target")
        elif smem_limit and shared > smem_limit:
            raise _out_of_resources(shared, smem_limit)
    except BaseException as exc:  # noqa: BLE001 - every failure is data here
        if isinstance(exc, KeyboardInterrupt):
            raise
        result.update(status="failed", exc_type=type(exc).__module__ + "." + type(exc).__qualname__,
                      error=_clip(_message(exc)) or traceback.format_exc()[-1500:])
    result["tools"] = _tools(list(STARTED))
    result["duration_s"] = round(time.monotonic() - start, 3)
    return result


def main():
    spec = os.environ.get("INDUCTOR_DOCTOR_XTARGET", "").strip()
    if len(spec.split()) != 3:
        raise SystemExit("SKIP: no target GPU given ($INDUCTOR_DOCTOR_XTARGET='cuda 80 32')")
    try:
        from triton.backends.compiler import GPUTarget  # noqa: F401 - Triton 3.0 and later
    except ImportError:
        raise SystemExit("SKIP: triton " + triton.__version__ + " predates GPUTarget (3.0): it cannot "
                         "compile for a GPU that is not here") from None
    smem = os.environ.get("INDUCTOR_DOCTOR_XTARGET_SMEM", "").strip()
    asked = [k for k in os.environ.get("INDUCTOR_DOCTOR_XTARGET_KERNELS", "").split(",") if k]
    asked = asked or list(KERNELS)
    original = _record_programs()
    try:
        for name in asked:
            if name not in KERNELS:
                emit({"kernel": name, "status": "skipped", "error": "no such kernel in this canary"})
        for name in (k for k in KERNELS if k in asked):  # in this file's order, the plainest first
            emit(compile_one(name, spec, int(smem) if smem.isdigit() else None))
    finally:
        subprocess.Popen.__init__ = original
    emit({"done": True, "triton": getattr(triton, "__version__", "?"), "target": spec})


main()
