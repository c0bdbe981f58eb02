#!/usr/bin/env bash
# Puts a GPU host into the broken states the catalog knows and prints the doctor's matrix for each.
# Usage (from the checkout, on a machine with an NVIDIA GPU and a CUDA torch):
#   bash tests/gpu_states.sh [PYTHON]        (default: python3)
# Every state runs `python -m inductor_doctor check --static --format json` in a subshell, so nothing
# leaks from one state to the next, and prints one line per CUDA/toolchain finding that is not
# not-applicable, then the expectation. Each catalog keeps its states in its own function below;
# the script runs every function named *_gpu_states.
set -uo pipefail
PY=${1:-python3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
export INDUCTOR_DOCTOR_CACHE_DIR=${INDUCTOR_DOCTOR_CACHE_DIR:-$(mktemp -d)}

# state NAME EXPECTATION [VAR=VALUE ...] [-- COMMAND PREFIX ...]: one check, summarised.
state() {
  local name=$1 expect=$2
  shift 2
  local assigns=() prefix=()
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; prefix=("$@"); break; fi
    assigns+=("$1")
    shift
  done
  echo "=== $name"
  echo "    env: ${assigns[*]:-(none)} ${prefix[*]:+prefix: ${prefix[*]}}"
  (
    for a in "${assigns[@]}"; do
      case $a in -*) unset "${a#-}" ;; *) export "${a?}" ;; esac
    done
    "${prefix[@]}" "$PY" -m inductor_doctor check --static --no-cache --format json --python "$PY" \
      --fail-on never 2>"${TMPDIR:-/tmp}/indoc-state.err" |
      "$PY" -c '
import json, sys
report = json.load(sys.stdin)
rows = [r for r in report["results"] if r["status"] != "not-applicable"
        and (r["device"].startswith("cuda") or r["id"] in ("cuda-toolkit-missing", "nvcc-too-old-for-arch"))]
for r in sorted(rows, key=lambda r: (r["device"], r["id"])):
    print("    %-10s %-28s %-13s %s" % (r["device"], r["id"], r["status"], r["reason"][:150]))
for lib in (report.get("environment", {}).get("cuda") or {}).get("libs") or []:
    if "LD_" in (lib.get("via") or ""):
        print("    lib: %s via %s -> %s (same build as the wheel: %s)" % (
            lib["soname"], lib["via"], lib["resolved"], lib.get("same_build")))
devices = sorted({r["device"] for r in report["results"] if r["device"].startswith("cuda")})
print("    devices: " + " ".join(devices))
' || sed 's/^/    stderr: /' "${TMPDIR:-/tmp}/indoc-state.err" | tail -5
  )
  echo "    expect: $expect"
}

# --- GPU/CUDA catalog: torch-gpu-arch-missing, cuda-devices-hidden, cuda-driver-too-old,
#     cuda-libs-shadowed, cuda-toolkit-missing, triton-shared-memory ------------------------------
catalog_gpu_states() {
  local uuid gpus cuda_lib nonvcc
  command -v nvidia-smi >/dev/null || echo "    (no nvidia-smi here: the GPU states show what a host without GPUs gets)"
  uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
  cuda_lib=$(ls -d /usr/local/cuda/targets/*/lib /usr/local/cuda/lib64 2>/dev/null | head -1)
  nonvcc=$(mktemp -d)
  # A wrapper, not a symlink: a venv's python found through a symlink elsewhere loses its venv.
  printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" > "$nonvcc/python3"
  chmod +x "$nonvcc/python3"
  [ "$PY" = python3 ] || cp "$nonvcc/python3" "$nonvcc/$(basename "$PY")"

  state "normal" "every cuda:N row present; cuda-devices-hidden ok; torch-gpu-arch-missing ok" \
    -CUDA_VISIBLE_DEVICES
  state "CUDA_VISIBLE_DEVICES empty" "no cuda:N rows; cuda-devices-hidden affected on 'cuda'" \
    CUDA_VISIBLE_DEVICES=
  state "CUDA_VISIBLE_DEVICES=7" "no cuda:N rows (unless the host has 8 GPUs); cuda-devices-hidden affected" \
    CUDA_VISIBLE_DEVICES=7
  state "CUDA_VISIBLE_DEVICES=0,0" "no cuda:N rows: a repeat hides every GPU" CUDA_VISIBLE_DEVICES=0,0
  state "CUDA_VISIBLE_DEVICES=GPU-deadbeef" "no cuda:N rows; 'matches no GPU'" CUDA_VISIBLE_DEVICES=GPU-deadbeef
  state "CUDA_VISIBLE_DEVICES=<uuid prefix>" "cuda:0 only" "CUDA_VISIBLE_DEVICES=${uuid:0:12}"
  state "CUDA_VISIBLE_DEVICES=0,7" "cuda:0 only; cuda-devices-hidden likely (7 dropped)" CUDA_VISIBLE_DEVICES=0,7
  state "LOCAL_RANK=$gpus" "cuda-devices-hidden affected: LOCAL_RANK beyond the $gpus visible" "LOCAL_RANK=$gpus"
  if [ -n "$cuda_lib" ]; then
    state "LD_LIBRARY_PATH=$cuda_lib" "cuda-libs-shadowed ok unless a wheel's dependency comes from there" \
      "LD_LIBRARY_PATH=$cuda_lib"
    state "LD_PRELOAD=$cuda_lib/libcudart.so.*" "cuda-libs-shadowed ok when the preloaded libcudart is the wheel's build (the lib: line says), else likely" \
      "LD_PRELOAD=$(ls "$cuda_lib"/libcudart.so.[0-9]* 2>/dev/null | head -1)"
  fi
  state "no nvcc, no CUDA_HOME" "cuda-toolkit-missing: /usr/local/cuda if it exists, else affected" \
    "PATH=$nonvcc:/usr/bin:/bin" -CUDA_HOME -CUDA_PATH
  state "CUDA_HOME=/nonexistent" "cuda-toolkit-missing affected: does not exist" CUDA_HOME=/nonexistent
  if command -v unshare >/dev/null && unshare --mount true 2>/dev/null; then
    state "no toolkit at all (/usr/local hidden)" "cuda-toolkit-missing affected: no CUDA toolkit" \
      "PATH=$nonvcc:/usr/bin:/bin" -CUDA_HOME -CUDA_PATH -- \
      unshare --mount sh -c 'mount -t tmpfs tmpfs /usr/local && exec "$@"' sh
  fi
  rm -rf "$nonvcc"
}

# --- nvcc-too-old-for-arch: the host's nvcc against its GPU and the arch lists asked ------------------
nvcc_arch_gpu_states() {
  local nvcc oldest
  nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
  [ -n "$nvcc" ] || { echo "    (no nvcc here: nvcc-too-old-for-arch is not-applicable)"; return; }
  echo "    nvcc: $nvcc ($("$nvcc" --version | grep -o 'release [0-9.]*')): $("$nvcc" --list-gpu-arch | tr '\n' ' ')"
  echo "    GPUs: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | tr '\n' ';')"
  oldest=$("$nvcc" --list-gpu-arch | head -1 | tr -dc 0-9)
  state "this nvcc, this GPU" "nvcc-too-old-for-arch ok when the GPU's compute_XX is in nvcc's list above, else affected" \
    -TORCH_CUDA_ARCH_LIST -FLASHINFER_CUDA_ARCH_LIST
  state "TORCH_CUDA_ARCH_LIST below nvcc's oldest (compute_$oldest)" "nvcc-too-old-for-arch affected, naming the entry" \
    "TORCH_CUDA_ARCH_LIST=3.5"
}

# --- earned verdicts: preflight on devices that are not there; files a static ok names -------------
# preflight NAME EXPECTATION DEVICE [VAR=VALUE ...]: one preflight() in the interpreter with torch.
preflight_state() {
  local name=$1 expect=$2 device=$3
  shift 3
  echo "=== preflight: $name"
  (
    for a in "$@"; do export "${a?}"; done
    "$PY" -c 'import sys, inductor_doctor; v = inductor_doctor.preflight(sys.argv[1]);
print("    usable=%s: %s" % (v.usable, v.reason[:220]))' "$device" 2>&1 | tail -3
  )
  echo "    expect: $expect"
}

trust_gpu_states() {
  local gpus stale
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
  preflight_state "cuda:0 as it is" "usable=True" cuda:0
  preflight_state "cuda:$gpus (one past the last GPU)" "usable=False: no such device: cuda:$gpus is out of range" \
    "cuda:$gpus"
  preflight_state "CUDA_VISIBLE_DEVICES empty" "usable=False: ... CUDA_VISIBLE_DEVICES='' hides them" cuda \
    CUDA_VISIBLE_DEVICES=
  preflight_state "xla without torch_xla" "usable=False: torch_xla is not installed" xla
  if command -v unshare >/dev/null && unshare --mount true 2>/dev/null; then
    state "/usr/local hidden (libcuda and the toolkit gone, the loader cache not)" \
      "libcuda-not-found affected ('the ldconfig cache lists ..., which is not there') where libcuda lived under /usr/local; never ok naming a path that is not there" \
      -INDUCTOR_DOCTOR_NOTHING -- unshare --mount sh -c 'mount -t tmpfs tmpfs /usr/local && exec "$@"' sh
  fi
  stale=$(mktemp -d)
  mkdir -p "$stale/triton"
  printf '__version__ = "2.1.0"\n' > "$stale/triton/__init__.py"
  state "a stale Triton on PYTHONPATH ($stale)" \
    "triton-missing affected ('import triton finds $stale/triton (triton 2.1.0), not the installed ...'); ptxas-unsupported-arch and triton-ptxas-driver inconclusive ('is not there'), never ok" \
    "PYTHONPATH=$HERE:$stale${PYTHONPATH:+:$PYTHONPATH}"  # the extra wheels a host without an index keeps there
  rm -rf "$stale"
}

# canary_state NAME EXPECTATION ONLY [VAR=VALUE ...]: one check *with* canaries (not --static): the
# headline notices, then every row that is not not-applicable, with its reason.
canary_state() {
  local name=$1 expect=$2 only=$3
  shift 3
  echo "=== $name"
  echo "    env: ${*:-(none)}"
  (
    for a in "$@"; do export "${a?}"; done
    "$PY" -m inductor_doctor check --no-cache --only "$only" --format json --python "$PY" \
      --fail-on never 2>"${TMPDIR:-/tmp}/indoc-state.err" |
      "$PY" -c '
import json, sys
report = json.load(sys.stdin)
for line in report.get("meta", {}).get("notices") or []:
    print("    headline: " + line[:220])
for r in sorted(report["results"], key=lambda r: (r["device"], r["id"])):
    if r["status"] != "not-applicable":
        print("    %-10s %-26s %-13s %s" % (r["device"], r["id"], r["status"], r["reason"][:220]))
print("    canaries: %s run, jobs %s, %.1fs" % (report["meta"].get("canaries_run"), report["meta"].get("jobs"),
                                             report["meta"].get("duration_s", 0)))
' || sed 's/^/    stderr: /' "${TMPDIR:-/tmp}/indoc-state.err" | tail -5
  )
  echo "    expect: $expect"
}

# --- issue 25: hollow compiles and a nearly full GPU --------------------------------------------------
verdicts_gpu_states() {
  command -v nvidia-smi >/dev/null || { echo "    (no nvidia-smi here: skipped)"; return 0; }
  local gpu_canaries=view-dtype-align,triton-constexpr-dynamic,triton-ptxas-driver,compile-workers-fail,triton-version-skew
  canary_state "TORCH_COMPILE_DISABLE=1" \
    "headline names TORCH_COMPILE_DISABLE=1 (environment); compile-bypassed affected [warning]; every canary ok names 'GPU kernels compiled' (or C++ kernels) and 'set aside for the canary: TORCH_COMPILE_DISABLE=1'" \
    "$gpu_canaries,compile-bypassed" TORCH_COMPILE_DISABLE=1
  canary_state "TORCHDYNAMO_SUPPRESS_ERRORS=1 TORCHDYNAMO_DISABLE=1" \
    "compile-bypassed names both; canaries ok with both set aside" \
    "$gpu_canaries,compile-bypassed" TORCHDYNAMO_SUPPRESS_ERRORS=1 TORCHDYNAMO_DISABLE=1
  # A process holding all but ~1 GiB of GPU 0, as another job on a shared GPU would.
  local holder ready
  ready=$(mktemp)
  "$PY" -c '
import sys, time, torch
free, total = torch.cuda.mem_get_info(0)
keep = free - (1 << 30)
blocks = []
while keep > (256 << 20):
    step = min(keep, 8 << 30)
    blocks.append(torch.empty(step, dtype=torch.uint8, device="cuda:0"))
    keep -= step
open(sys.argv[1], "w").write("%d" % torch.cuda.mem_get_info(0)[0])
time.sleep(1800)
' "$ready" &
  holder=$!
  for _ in $(seq 1 120); do [ -s "$ready" ] && break; sleep 1; done
  echo "    (a process holds GPU 0: $(( $(cat "$ready" 2>/dev/null || echo 0) >> 20 )) MiB left free)"
  nvidia-smi --query-gpu=index,memory.free,memory.used --format=csv,noheader | sed 's/^/    nvidia-smi: /'
  canary_state "GPU 0 nearly full (1 GiB free)" \
    "headline says once: 'cuda:0 (...) is nearly full: 1.0 GiB free of ... GiB'; its canaries ran one at a time (compare duration with the state above); verdicts true (ok with proof, or inconclusive naming out of memory), none ok without 'compiled'" \
    "$gpu_canaries"
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
  rm -f "$ready"
}

# --- extensions built without this GPU's code (extension-gpu-arch-missing) -------------------------------
# A one-kernel CUDA extension, a real package built by torch's own CUDAExtension with nvcc for one
# architecture that cannot run here, installed into a scratch venv over $PY's site-packages: calling
# its op must fail with "no kernel image is available", and the check must say so on cuda:0. Built
# again with +PTX of that architecture, the driver compiles its PTX here: ok.
classes_gpu_states() {
  command -v nvidia-smi >/dev/null || { echo "    (no nvidia-smi here: skipped)"; return 0; }
  local cap other scratch src venv
  cap=$("$PY" -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability(0))' 2>/dev/null) || {
    echo "    (no CUDA torch for $PY: skipped)"; return 0; }
  case $cap in 8.*) other=7.5 ;; *) other=8.0 ;; esac
  scratch=$(mktemp -d)
  src="$scratch/src"
  mkdir -p "$src"
  cat > "$src/k.cu" <<'CU'
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void add_one(float* x, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
torch::Tensor bump(torch::Tensor x) {
  add_one<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return x;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("bump", &bump); }
CU
  cat > "$src/setup.py" <<'PY'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="indoc-arch-probe", version="1.0", ext_modules=[CUDAExtension("indoc_arch_probe", ["k.cu"])],
      cmdclass={"build_ext": BuildExtension})
PY
  for arch in "$other" "$other+PTX"; do
    venv="$scratch/venv-${arch//+/-}"
    "$PY" -m venv --system-site-packages "$venv"
    if ! TORCH_CUDA_ARCH_LIST=$arch "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps \
        "$src" >"$scratch/build.log" 2>&1; then
      echo "    (building the extension for $arch failed: skipped)"; tail -3 "$scratch/build.log" | sed 's/^/    /'
      continue
    fi
    rm -rf "$src/build"
    echo "=== run: an extension built for $arch only, on sm_${cap/./}"
    "$venv/bin/python" -c 'import torch, indoc_arch_probe as m
print("    op ran:", m.bump(torch.zeros(4, device="cuda"))[:2].tolist())' 2>&1 | tail -1 | sed 's/^/    /'
    if [ "$arch" = "$other" ]; then
      echo "    expect: RuntimeError: CUDA error: no kernel image is available for execution on the device"
      PY="$venv/bin/python" state "an extension built for $arch only" \
        "extension-gpu-arch-missing affected on cuda:0: 'indoc-arch-probe 1.0 (indoc_arch_probe...so has sm_${other/./})'"
    else
      echo "    expect: op ran: [1.0, 1.0]"
      PY="$venv/bin/python" state "an extension built for $arch" \
        "extension-gpu-arch-missing ok on cuda:0: '... through PTX the driver compiles on first use'"
    fi
  done
  rm -rf "$scratch"
  # cuda-malloc-async-graphs: the canary compiles with mode="reduce-overhead" under the allocator the
  # user chose; the static rule reads the variable.
  canary_state "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" \
    "cuda-malloc-async-graphs affected on cuda:0, 'canary reproduced it: cudaMallocAsync does not yet support checkPoolLiveAllocations', and the reason says what slow_path_cudagraph_asserts=False did" \
    cuda-malloc-async-graphs PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  canary_state "torch's own allocator" "cuda-malloc-async-graphs not-applicable (no backend:cudaMallocAsync)" \
    cuda-malloc-async-graphs
  # cublas-pairing: the GEMM canary with the cuBLAS wheel as installed, then with another release of it in
  # a scratch venv over $PY's site-packages (the host's own wheel is never touched).
  canary_state "cuBLAS as installed" \
    "cublas-pairing ok on each cuda:N ('6 cuBLAS GEMMs on ...'), or affected with CUBLAS_STATUS_INVALID_VALUE and the reason naming the pairing" \
    cublas-pairing
  local wheel other venv2
  wheel=$("$PY" -c '
import importlib.metadata as m
for d in ("nvidia-cublas-cu12", "nvidia-cublas"):
    try:
        m.version(d)
    except m.PackageNotFoundError:
        continue
    print(d)
    break
' 2>/dev/null)
  if [ -n "$wheel" ]; then
    other=$([ "$wheel" = nvidia-cublas-cu12 ] && echo "nvidia-cublas-cu12==12.8.4.1" || echo "nvidia-cublas==13.0.0.19")
    venv2=$(mktemp -d)/venv
    "$PY" -m venv --system-site-packages "$venv2"
    if "$venv2/bin/python" -m pip install -q --no-deps "$other" >/dev/null 2>&1; then
      PY="$venv2/bin/python" canary_state "cuBLAS swapped for $other" \
        "cublas-pairing likely from the pin (or the known-bad table for torch 2.9.1-2.10 cu128), and the canary says whether this GPU's GEMMs fail" \
        cublas-pairing
    fi
    rm -rf "$(dirname "$venv2")"
  fi
}

status=0
for fn in $(declare -F | awk '{print $3}' | grep '_gpu_states$'); do
  echo "##### $fn"
  "$fn" || status=1
done
exit $status
