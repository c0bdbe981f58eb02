#!/usr/bin/env bash
# Builds the heavy test environments once, outside the checkout, so repeat runs are fast.
# Usage: tests/envs/build.sh [NAME ...]   (default: all). Each env is ready when NAME/.ready exists.
# Names: torch-2.9-nodeps  (torch 2.9.0 headers + libtorch, without its CUDA deps: import fails)
#        xla-2.5.1         (torch 2.5.1 + torch_xla 2.5.1: has the xla#8464 donor-hash bug)
#        xla-2.6.0         (torch 2.6.0 + torch_xla 2.6.0: fixed)
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
mkdir -p "$ROOT"

build() {
  local name=$1; shift
  local dir="$ROOT/$name"
  [ -f "$dir/.ready" ] && { echo "$name: cached at $dir"; return 0; }
  echo "$name: building at $dir"
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@"
  touch "$dir/.ready"
}

SELECTED=("$@")
for name in torch-2.9-nodeps xla-2.5.1 xla-2.6.0; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    case $name in
      torch-2.9-nodeps) build "$name" --no-deps torch==2.9.0 ;;
      xla-2.5.1) build "$name" torch==2.5.1 torch_xla==2.5.1 ;;
      xla-2.6.0) build "$name" torch==2.6.0 torch_xla==2.6.0 ;;
    esac
  fi
done
