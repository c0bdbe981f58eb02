#!/usr/bin/env bash
# Builds the environments of prebuilt torch extensions beside torch 2.13.0 (extension-torch-mismatch,
# tests/known_issues/test_states_extensions.py), once, outside the checkout.
# Usage: tests/envs/build_extensions.sh [NAME ...]   (default: all). NAME/.ready marks a finished env.
#
# Each is a venv over this machine's Python with its site-packages (torch 2.13.0+cpu, installed by
# tests/setup.sh), and real wheels from PyPI installed with --no-deps, as `pip install X` followed by
# another torch leaves them:
#   ext-older    fbgemm-gpu-cpu 1.3.0 (a CPU build for torch 2.8: its libraries import
#                torch::Library::_def(std::variant<...>) and c10::MessageLogger(const char*, int, int),
#                which 2.13 does not export), torchao 0.15.0 (a CUDA 12 build for torch 2.9.1: links
#                libc10_cuda.so; its own check skips its library) and torchvision 0.29.1 (a CUDA 13
#                build for torch 2.14: `operator torchvision::nms does not exist`). About 40 MB.
#   ext-newer    fbgemm-gpu-cpu 1.9.0, built for torch 2.14: imports torch::autograd::_wrap_outputs
#                of 2.14's signature.
#   ext-paired   fbgemm-gpu-cpu 1.8.0, the release built for torch 2.13: it loads and runs.
#   triton-api-old  Triton 3.7.1 (torch 2.13.0 pins ==3.7.1) with bitsandbytes 0.44.1, which imports
#                triton.ops.matmul_perf_model (gone in Triton 3.2): "No module named 'triton.ops'".
#   triton-api-new  the same Triton with bitsandbytes 0.45.5, which no longer does.
#   triton-old-cuda13  Triton 3.2.0 (whose ptx_get_version maps CUDA 12 up to 12.6) over this machine's
#                site-packages, for triton-too-old-for-cuda with TRITON_PTXAS_PATH at CUDA 13.0's ptxas.
#   cuda12-headers  not a venv: the include directory of nvidia-cuda-nvcc-cu12 12.4.131 (CUDA 12.4's
#                crt/ headers), for nvcc-headers-skew beside this machine's nvcc (CUDA 13.0).
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
PIP_FLAGS=(-q --disable-pip-version-check --no-deps)
mkdir -p "$ROOT"

build() {
  local name=$1; shift
  local dir="$ROOT/$name"
  [ -f "$dir/.ready" ] && { echo "$name: cached at $dir"; return 0; }
  echo "$name: building at $dir"
  rm -rf "$dir"
  "$PY" -m venv --system-site-packages "$dir"
  "$dir/bin/python" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.13.0") else 1)' || {
    echo "$name: needs torch 2.13.0 in $PY's site-packages (tests/setup.sh installs it)" >&2; return 1; }
  "$dir/bin/python" -m pip install "${PIP_FLAGS[@]}" "$@" 2>&1 | grep -v "^WARNING: Location" || true
  "$dir/bin/python" -m pip show -q "${@%%==*}" >/dev/null
  touch "$dir/.ready"
}

SELECTED=("$@")
headers() {
  local dir="$ROOT/$1"
  [ -f "$dir/.ready" ] && { echo "$1: cached at $dir"; return 0; }
  rm -rf "$dir" && mkdir -p "$dir"
  "$PY" -m pip download -q --disable-pip-version-check --no-deps nvidia-cuda-nvcc-cu12==12.4.131 -d "$dir" \
    2>&1 | grep -v "^WARNING: Location" || true
  "$PY" -c 'import sys, zipfile, glob; zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0]).extractall(sys.argv[1])' "$dir"
  rm -f "$dir"/*.whl
  [ -f "$dir/nvidia/cuda_nvcc/include/crt/host_runtime.h" ] && touch "$dir/.ready"
}

for name in ext-older ext-newer ext-paired triton-api-old triton-api-new triton-old-cuda13 cuda12-headers; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    case $name in
      ext-older) build "$name" fbgemm-gpu-cpu==1.3.0 torchao==0.15.0 torchvision==0.29.1 ;;
      ext-newer) build "$name" fbgemm-gpu-cpu==1.9.0 ;;
      ext-paired) build "$name" fbgemm-gpu-cpu==1.8.0 ;;
      triton-api-old) build "$name" triton==3.7.1 bitsandbytes==0.44.1 ;;
      triton-api-new) build "$name" triton==3.7.1 bitsandbytes==0.45.5 ;;
      triton-old-cuda13) build "$name" triton==3.2.0 ;;
      cuda12-headers) headers "$name" ;;
    esac
  fi
done
