#!/usr/bin/env bash
# Builds the broken environments that the catalog tests diagnose for real, once, outside the checkout.
# Usage: tests/envs/build_catalog.sh [NAME ...]   (default: all). NAME/.ready marks a finished env.
#
#   catalog-noheaders    this machine's Python 3.11 (same stdlib, same site-packages, so the same
#                        torch) installed under a prefix without include/: sysconfig's include dir,
#                        and so Python.h, is missing, as on a distro Python without python3-dev.
#   catalog-triton-skew  torch 2.6.0 (pins triton==3.2.0) with triton 3.3.1, which removed
#                        AttrsDescriptor: `import torch._inductor...` fails (triton-lang/triton#6080).
#                        A hard-linked copy of xla-2.6.0 (built first by build.sh) without torch_xla.
#   catalog-py313-torch25 Python 3.13 with torch 2.5.1 (cp313 wheel), whose torch.compile refuses 3.13
#                        ("Dynamo is not supported on Python 3.13+"); the CUDA libraries are
#                        hard-linked from xla-2.5.1 so that `import torch` works.
#   cache-torch-2.7.1    torch 2.7.1 (the index's CUDA 12.6 build, with its nvidia-* wheels; it runs on
#                        CPU), the oldest release with torch.compiler.save_cache_artifacts. Its blob
#                        layout predates the checksum 2.8 added: neither it nor 2.13 reads the other's
#                        blob (load_cache_artifacts warns and returns None) and the compile misses every
#                        entry (artifact-cache-foreign, tests/commands/test_artifacts.py). About 5 GB;
#                        about 3 minutes here.
#   cache-torch-2.9.0    torch 2.9.0 with its nvidia-* wheels: a hard-linked copy of torch-2.9-nodeps
#                        (built first by build.sh) given the dependencies it lacks (5 GB more, about 3
#                        minutes here). It reads 2.13's blobs and misses every entry (a recompile), and
#                        2.13 misses its.
#
# Python interpreters come from PYENV_ROOT (default ~/.pyenv): 3.11.x and 3.13.x must be there.
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
HERE=$(cd "$(dirname "$0")" && pwd)
PIP_FLAGS=(-q --disable-pip-version-check)
mkdir -p "$ROOT"

pyenv_python() {  # newest installed pyenv interpreter of a minor version, e.g. 3.13
  local minor=$1 dir
  dir=$(ls -d "$PYENV_ROOT/versions/$minor".* 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] || { echo "no Python $minor under $PYENV_ROOT/versions" >&2; return 1; }
  echo "$dir"
}

site_packages() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

build_noheaders() {
  local dir=$1 base minor
  base=$(pyenv_python 3.11)
  minor=python3.11
  mkdir -p "$dir/bin" "$dir/lib"
  # A copy, not a symlink: Python finds its prefix from where its executable lies.
  cp "$base/bin/$minor" "$dir/bin/$minor"
  ln -s "$minor" "$dir/bin/python"
  ln -s "$minor" "$dir/bin/python3"
  ln -s "$base/lib/$minor" "$dir/lib/$minor"
  local inc
  inc=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  case $inc in "$dir"/*) ;; *) echo "unexpected include dir $inc" >&2; return 1 ;; esac
  [ ! -e "$inc/Python.h" ] || { echo "$inc/Python.h exists" >&2; return 1; }
  "$dir/bin/python" -c 'import torch' >/dev/null
}

build_triton_skew() {
  local dir=$1 src="$ROOT/xla-2.6.0"
  [ -f "$src/.ready" ] || bash "$HERE/build.sh" xla-2.6.0
  cp -al "$src" "$dir"
  rm -f "$dir/.ready"
  local py="$dir/bin/python"
  # The copy's scripts still name the source venv; only `bin/python -m ...` is used here.
  sed -i "s#$src#$dir#g" "$dir/pyvenv.cfg" "$dir/bin/activate" 2>/dev/null || true
  "$py" -m pip uninstall -y "${PIP_FLAGS[@]}" torch_xla triton
  "$py" -m pip install "${PIP_FLAGS[@]}" --no-deps triton==3.3.1
  "$py" -c 'import importlib.metadata as m; assert m.version("triton") == "3.3.1"; assert m.version("torch") == "2.6.0"'
}

build_py313_torch25() {
  local dir=$1 base src="$ROOT/xla-2.5.1"
  base=$(pyenv_python 3.13)
  [ -f "$src/.ready" ] || bash "$HERE/build.sh" xla-2.5.1
  "$base/bin/python3" -m venv "$dir"
  local py="$dir/bin/python"
  "$py" -m pip install "${PIP_FLAGS[@]}" --no-deps torch==2.5.1
  "$py" -m pip install "${PIP_FLAGS[@]}" filelock typing-extensions networkx jinja2 fsspec setuptools sympy==1.13.1
  # The nvidia-* wheels are Python-independent (py3-none): share xla-2.5.1's copies.
  local from to
  from=$(site_packages "$src/bin/python")
  to=$(site_packages "$py")
  cp -al "$from/nvidia" "$to/nvidia"
  cp -al "$from"/nvidia_*.dist-info "$to/"
  "$py" -c 'import torch, sys; assert sys.version_info[:2] == (3, 13); print(torch.__version__)' >/dev/null
}

build_torch_271() {
  local dir=$1
  "$(pyenv_python 3.11)/bin/python3" -m venv "$dir"
  "$dir/bin/python" -m pip install "${PIP_FLAGS[@]}" torch==2.7.1
  "$dir/bin/python" -c 'import torch; assert torch.__version__.startswith("2.7.1"), torch.__version__
assert hasattr(torch.compiler, "load_cache_artifacts")'
}

build_torch_290() {
  local dir=$1 src="$ROOT/torch-2.9-nodeps"
  [ -f "$src/.ready" ] || bash "$HERE/build.sh" torch-2.9-nodeps
  cp -al "$src" "$dir"
  rm -f "$dir/.ready"
  sed -i "s#$src#$dir#g" "$dir/pyvenv.cfg" "$dir/bin/activate" 2>/dev/null || true
  # torch is there (its files stay shared with the source); pip adds only what it depends on.
  "$dir/bin/python" -m pip install "${PIP_FLAGS[@]}" torch==2.9.0
  "$dir/bin/python" -c 'import torch; assert torch.__version__.startswith("2.9.0"), torch.__version__'
}

build() {
  local name=$1 dir="$ROOT/$1"
  [ -f "$dir/.ready" ] && { echo "$name: cached at $dir"; return 0; }
  echo "$name: building at $dir"
  rm -rf "$dir"
  case $name in
    catalog-noheaders) build_noheaders "$dir" ;;
    catalog-triton-skew) build_triton_skew "$dir" ;;
    catalog-py313-torch25) build_py313_torch25 "$dir" ;;
    cache-torch-2.7.1) build_torch_271 "$dir" ;;
    cache-torch-2.9.0) build_torch_290 "$dir" ;;
    *) echo "unknown env $name" >&2; return 2 ;;
  esac
  touch "$dir/.ready"
}

ALL=(catalog-noheaders catalog-triton-skew catalog-py313-torch25 cache-torch-2.7.1 cache-torch-2.9.0)
for name in "${@:-${ALL[@]}}"; do
  build "$name"
done
