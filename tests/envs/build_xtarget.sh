#!/usr/bin/env bash
# Builds the Triton releases the cross-target tests compile with (tests/known_issues/test_cross_target.py,
# `-m envs`), once, outside the checkout, under ~/.cache/inductor-doctor-tests. NAME/.ready marks a finished one.
# Usage: tests/envs/build_xtarget.sh [NAME ...]   (default: all)
#
#   xtarget-triton-3.9.0  the newest Triton: CUDA 12.9 ptxas below sm_90, its CUDA 13.4 ptxas-blackwell from
#                         sm_90 on; the AMD back end links in process (no ld.lld). Over this machine's Python
#                         and its torch 2.13 (--system-site-packages): `check --python` sees a whole stack.
#   xtarget-triton-3.7.1  torch 2.13's Triton (the recipe's pin in docs/docker.md): CUDA 12.8 ptxas, CUDA 13.1
#                         ptxas-blackwell from sm_100. Over this machine's torch too.
#   xtarget-triton-3.2.0  a Triton whose only ptxas is CUDA 12.4: it knows no sm_100/sm_120 ("Value 'sm_120' is
#                         not defined for option 'gpu-name'"), lowers a bf16 tl.dot to PTX that ptxas refuses
#                         below sm_80, and looks for ROCm's ld.lld in /opt/rocm (not here). Triton alone.
#   xtarget-triton-3.1.0  the older fp8 wording ("fp8e4nv data type is not supported on CUDA arch < 89") and
#                         Triton 3.0/3.1's AttrsDescriptor. Triton alone.
# About 0.5-1 GB each (the Triton wheel), half a minute each here.
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
mkdir -p "$ROOT"

build() {
  local name=$1 version=$2 shared=$3 dir
  dir="$ROOT/$name"
  [ -f "$dir/.ready" ] && { echo "$name: cached at $dir"; return 0; }
  echo "$name: building at $dir"
  rm -rf "$dir"
  if [ "$shared" = yes ]; then "$PY" -m venv --system-site-packages "$dir"; else "$PY" -m venv "$dir"; fi
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "triton==$version"
  "$dir/bin/python" -c "import triton, sys; assert triton.__version__ == sys.argv[1], triton.__version__" "$version"
  touch "$dir/.ready"
}

SELECTED=("$@")
for name in xtarget-triton-3.9.0 xtarget-triton-3.7.1 xtarget-triton-3.2.0 xtarget-triton-3.1.0; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    case $name in
      xtarget-triton-3.9.0) build "$name" 3.9.0 yes ;;
      xtarget-triton-3.7.1) build "$name" 3.7.1 yes ;;
      xtarget-triton-3.2.0) build "$name" 3.2.0 no ;;
      xtarget-triton-3.1.0) build "$name" 3.1.0 no ;;
    esac
  fi
done
