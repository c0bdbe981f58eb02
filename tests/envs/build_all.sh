#!/usr/bin/env bash
# Builds every heavy test environment the `envs`, `heavy` and `container` stages need, once, outside the
# checkout (each script skips what its NAME/.ready says is there). .ci/run starts it in the background
# beside the default run: most of it is downloading and unpacking, which leaves the cores to the tests.
# The catalog's torch 2.9.0 comes before the compile-cache venvs, which are hard-linked copies of it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
for script in build.sh build_catalog.sh build_gpu_catalog.sh build_xtarget.sh build_extensions.sh \
              build_platforms.sh build_caches.sh build_container.sh; do
  t0=$(date +%s)
  bash "$HERE/$script"
  echo "-- $script: $(($(date +%s) - t0)) s"
done
