#!/usr/bin/env bash
# Installs what the tests need: the package with its test extra (torch 2.13 CPU among them), the
# real compilers the ABI and catalog tests run (clang-16, clang-19; deliberately without libomp), and
# the engines the tests start for real: Debian's redis-server (the remote compile cache) and Slurm
# with munge (the fleet's drain round trip).
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
# The engines, each test starting a private instance of its own (tests/redis_server.py on a free
# port; tests/commands/test_fleet_slurm.py a single-node cluster): the packages' services are not used.
NEED=""
command -v redis-server >/dev/null || NEED="$NEED redis-server"
{ [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ]; } || NEED="$NEED slurmctld slurmd slurm-client munge"
if [ -n "$NEED" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $NEED >/dev/null
fi
# libomp for clang-16, downloaded (never installed: clang must stay without OpenMP here); the fix-loop
# tests unpack it where a private clang looks, as `apt-get install libomp-16-dev` would.
DEBS=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}/debs
if ! ls "$DEBS"/libomp-16-dev_*.deb "$DEBS"/libomp5-16_*.deb >/dev/null 2>&1; then
  mkdir -p "$DEBS"
  (cd "$DEBS" && apt-get download libomp-16-dev libomp5-16 >/dev/null 2>&1) || {
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && (cd "$DEBS" && apt-get download libomp-16-dev libomp5-16 >/dev/null)
  }
fi
