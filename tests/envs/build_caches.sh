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

redis_client() { "$PY" -m pip install -q --disable-pip-version-check --target "$(seeing_this_python "$1" | tail -1)" redis; }
redis_triton() {
  "$PY" -m pip install -q --disable-pip-version-check --target "$(seeing_this_python "$1" | tail -1)" \
    redis triton==3.5.1
}
torch_290() {  # a hard-linked copy of the catalog's torch 2.9.0 venv (one download of torch serves both)
  local src="$ROOT/cache-torch-2.9.0"
  [ -f "$src/.ready" ] || bash "$(dirname "$0")/build_catalog.sh" cache-torch-2.9.0
  cp -al "$src" "$1"
  rm -f "$1/.ready"
  sed -i "s#$src#$1#g" "$1/pyvenv.cfg" "$1/bin/activate" 2>/dev/null || true
  "$1/bin/python" -m pip install -q --disable-pip-version-check torch==2.9.0 redis
  "$1/bin/python" -m pip install -q --disable-pip-version-check --no-deps vllm==0.11.2
}

build() {  # build NAME MAKER: MAKER DIR makes it, unless NAME/.ready says it is there
  if [ -f "$ROOT/$1/.ready" ]; then echo "$1: cached at $ROOT/$1"; return 0; fi
  echo "$1: building at $ROOT/$1" && rm -rf "${ROOT:?}/$1"
  "$2" "$ROOT/$1" && touch "$ROOT/$1/.ready"
}

SELECTED=("$@")
for name in caches-redis-client caches-redis-triton caches-torch-2.9.0; do
  if [ ${#SELECTED[@]} -eq 0 ] || printf '%s\n' "${SELECTED[@]}" | grep -qx "$name"; then
    case $name in
      caches-redis-client) build "$name" redis_client ;;
      caches-redis-triton) build "$name" redis_triton ;;
      caches-torch-2.9.0) build "$name" torch_290 ;;
    esac
  fi
done
