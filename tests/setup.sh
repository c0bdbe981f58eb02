#!/usr/bin/env bash
# Installs what the tests need: the package with its test extra (torch 2.13 CPU among them) and the
# real compilers the ABI and catalog tests run (clang-16, clang-19; deliberately without libomp).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -m pip install -q --disable-pip-version-check -e '.[test]' 2>&1 | grep -v "^WARNING: Location" || true
"$PY" -c "import inductor_doctor, torch, pytest" >/dev/null
if ! command -v clang++-19 >/dev/null || ! command -v clang++-16 >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-16 clang-19 >/dev/null
fi
