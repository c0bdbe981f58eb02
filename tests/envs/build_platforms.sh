#!/usr/bin/env bash
# Builds the cached parts of tests/known_issues/test_states_platforms.py's `-m envs` tests, once,
# outside the checkout: Triton 3.4.0's released wheel (the last whose AMD backend looks for an
# external ld.lld), installed with pip into a target directory that a test venv links to.
# Usage: tests/envs/build_platforms.sh        Ready when platforms-triton-3.4.0/.ready and
# platforms-windows-dlls/.ready exist.
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
dir="$ROOT/platforms-triton-3.4.0"
if [ -f "$dir/.ready" ]; then
  echo "platforms-triton-3.4.0: cached at $dir"
else
  rm -rf "$dir"
  mkdir -p "$dir"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$dir/site" triton==3.4.0
  test -f "$dir/site/triton/backends/amd/compiler.py"
  touch "$dir/.ready"
  echo "platforms-triton-3.4.0: built at $dir ($(du -sh "$dir" | cut -f1))"
fi

# Real Windows DLLs for tests/known_issues/test_rules_msvc_runtime.py's `-m envs` tests: the Visual C++
# runtime of two releases (the msvc-runtime wheels on PyPI ship Microsoft's redistributable DLLs) and
# torch 2.8.0's and 2.9.0's c10.dll, read by range requests from their Windows wheels (the audit's reader:
# a few MB, not the wheels).
dlls="$ROOT/platforms-windows-dlls"
if [ -f "$dlls/.ready" ]; then
  echo "platforms-windows-dlls: cached at $dlls"
else
  rm -rf "$dlls"
  mkdir -p "$dlls/wheels"
  for v in 14.29.30133 14.42.34433; do
    "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform win_amd64 --python-version 3.11 --implementation cp -d "$dlls/wheels" "msvc-runtime==$v" ||
      "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform win_amd64 --python-version 3.10 --implementation cp -d "$dlls/wheels" "msvc-runtime==$v"
    mkdir -p "$dlls/runtime-$v"
    "$PY" - "$dlls/wheels" "$v" "$dlls/runtime-$v" <<'PY'
import glob, os, sys, zipfile
wheels, version, out = sys.argv[1:]
(path,) = glob.glob(os.path.join(wheels, f"msvc_runtime-{version}-*.whl"))
with zipfile.ZipFile(path) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        if "/Scripts/" not in name and base.lower() in ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"):
            with open(os.path.join(out, base.lower()), "wb") as f:
                f.write(z.read(name))
PY
  done
  HERE=$(cd "$(dirname "$0")/../.." && pwd)
  PYTHONPATH="$HERE/tools:$HERE${PYTHONPATH:+:$PYTHONPATH}" "$PY" - "$dlls" <<'PY'
import os, shutil, sys
from audit import remote
out = sys.argv[1]
files = remote.index("torch")["files"]
for version in ("2.8.0", "2.9.0"):
    f = next(f for f in files if f["filename"] == f"torch-{version}-cp311-cp311-win_amd64.whl")
    local = remote.Wheel(f).member("torch/lib/c10.dll")
    os.makedirs(os.path.join(out, f"torch-{version}", "lib"), exist_ok=True)
    shutil.copy(local, os.path.join(out, f"torch-{version}", "lib", "c10.dll"))
PY
  rm -rf "$dlls/wheels"
  touch "$dlls/.ready"
  echo "platforms-windows-dlls: built at $dlls ($(du -sh "$dlls" | cut -f1))"
fi
