#!/usr/bin/env bash
# Builds the venvs of the compile-cache tests (tests/known_issues/test_cache_keys_compiles.py and
# test_cache_shared_writers.py, `-m heavy`) once, outside the checkout. Each is ready when NAME/.ready exists.
#   caches-redis-client   this interpreter's packages (torch 2.13) and the redis client
#   caches-redis-triton   the same and Triton 3.5.1 (another triton_key() for the same torch)
#   caches-torch-2.9.0    torch 2.9.0 (its CUDA build, run on CPU), the redis client, vLLM 0.11.2 without its
#                         dependencies (what the doctor reads of it: its metadata and cache root)
# Usage: tests/envs/build_caches.sh [NAME ...]   (default: all)
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
mkdir -p "$ROOT"

seeing_this_python() {  # a venv that sees this interpreter's site-packages (torch, the doctor), as the tests make
  local dir=$1
  "$PY" -m venv --without-pip "$dir"
  local purelib
  purelib=$("$dir/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  "$PY" - "$purelib" <<'PYEOF'
import os, site, sys
dirs = [d for d in dict.fromkeys(site.getsitepackages()) if os.path.isdir(d)]
open(os.path.join(sys.argv[1], "_indoc_tests_this_python.pth"), "w").write(
    "".join(f"import site; site.addsitedir({d!r})\n" for d in dirs))
PYEOF
  echo "$purelib"
}

build() {
  local name=$1 dir="$ROOT/$1"
  [ -f "$dir/.ready" ] && { echo "$name: cached at $dir"; return 0; }
  echo "$name: building at $dir"
  rm -rf "$dir"
  case $name in
    caches-redis-client)
      purelib=$(seeing_this_python "$dir" | tail -1)
      "$PY" -m pip install -q --disable-pip-version-check --target "$purelib" redis ;;
    caches-redis-triton)
      purelib=$(seeing_this_python "$dir" | tail -1)
      "$PY" -m pip install -q --disable-pip-version-check --target "$purelib" redis triton==3.5.1 ;;
    caches-torch-2.9.0)
      "$PY" -m venv "$dir"
      "$dir/bin/python" -m pip install -q --disable-pip-version-check torch==2.9.0 redis
      "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps vllm==0.11.2 ;;
  esac
  touch "$dir/.ready"
}

SELECTED=("$@")
for name in caches-redis-client caches-redis-triton caches-torch-2.9.0; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    build "$name"
  fi
done
