#!/usr/bin/env bash
# Builds what the GPU/CUDA catalog tests need beside the heavy venvs, once, outside the checkout.
# Usage: tests/envs/build_gpu_catalog.sh [NAME ...]   (default: all). NAME/.ready marks a finished one.
#
#   catalog-cuda121-libs  lib/libcudart.so.12 and lib/libnvJitLink.so.12 of CUDA 12.1, taken from the
#                         nvidia-cuda-runtime-cu12 and nvidia-nvjitlink-cu12 12.1.105 wheels: a
#                         directory to put on LD_LIBRARY_PATH in front of torch's CUDA 12.4 wheels, as a
#                         system toolkit's lib64 would be (cuda-libs-shadowed, pytorch/pytorch#134929).
#   catalog-nvjitlink-skew  a hard-linked copy of xla-2.6.0 (torch 2.6.0, CUDA 12.4 wheels) in which pip
#                         put nvidia-nvjitlink-cu12 12.1.105 in place of 12.4.127, as happens when
#                         another package pins it lower: torch's own libcusparse then lacks its symbols.
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
mkdir -p "$ROOT"

build_cuda121_libs() {
  local dir=$1 tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux1_x86_64 --python-version 3.11 -d "$tmp" \
    nvidia-cuda-runtime-cu12==12.1.105 nvidia-nvjitlink-cu12==12.1.105
  mkdir -p "$dir/lib"
  "$PY" - "$tmp" "$dir/lib" <<'PYEOF'
import os, sys, zipfile
src, dst = sys.argv[1:3]
for wheel in sorted(os.listdir(src)):
    with zipfile.ZipFile(os.path.join(src, wheel)) as z:
        for name in z.namelist():
            base = os.path.basename(name)
            if "/lib/" in name and base in ("libcudart.so.12", "libnvJitLink.so.12"):
                with open(os.path.join(dst, base), "wb") as f:
                    f.write(z.read(name))
PYEOF
  [ -f "$dir/lib/libcudart.so.12" ] && [ -f "$dir/lib/libnvJitLink.so.12" ]
}

build_nvjitlink_skew() {
  local dir=$1 src="$ROOT/xla-2.6.0"
  [ -f "$src/.ready" ] || bash "$(dirname "$0")/build.sh" xla-2.6.0
  cp -al "$src" "$dir"
  rm -f "$dir/.ready"
  sed -i "s#$src#$dir#g" "$dir/pyvenv.cfg" "$dir/bin/activate" 2>/dev/null || true
  local py="$dir/bin/python"
  # pip replaces files by unlinking them first, so the hard-linked source venv keeps its own copy.
  "$py" -m pip uninstall -y -q torch_xla
  "$py" -m pip install -q --disable-pip-version-check --no-deps nvidia-nvjitlink-cu12==12.1.105
  "$py" -c 'import importlib.metadata as m; assert m.version("nvidia-nvjitlink-cu12") == "12.1.105"'
  cmp -s "$src/lib/python3.11/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12" \
         "$dir/lib/python3.11/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12" && return 1
  return 0
}

SELECTED=("$@")
for name in catalog-cuda121-libs catalog-nvjitlink-skew; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    dir="$ROOT/$name"
    if [ -f "$dir/.ready" ]; then echo "$name: cached at $dir"; continue; fi
    echo "$name: building at $dir"
    rm -rf "$dir"
    case $name in
      catalog-cuda121-libs) build_cuda121_libs "$dir" ;;
      catalog-nvjitlink-skew) build_nvjitlink_skew "$dir" ;;
    esac
    touch "$dir/.ready"
  fi
done
