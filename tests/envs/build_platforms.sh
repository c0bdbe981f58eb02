#!/usr/bin/env bash
# Builds the cached parts of tests/known_issues/test_states_platforms.py's `-m envs` tests, once,
# outside the checkout: Triton 3.4.0's released wheel (the last whose AMD backend looks for an
# external ld.lld), installed with pip into a target directory that a test venv links to.
# Usage: tests/envs/build_platforms.sh        Ready when platforms-triton-3.4.0/.ready exists.
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
PY=${PYTHON:-python3}
dir="$ROOT/platforms-triton-3.4.0"
[ -f "$dir/.ready" ] && { echo "platforms-triton-3.4.0: cached at $dir"; exit 0; }
rm -rf "$dir"
mkdir -p "$dir"
"$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$dir/site" triton==3.4.0
test -f "$dir/site/triton/backends/amd/compiler.py"
touch "$dir/.ready"
echo "platforms-triton-3.4.0: built at $dir ($(du -sh "$dir" | cut -f1))"
