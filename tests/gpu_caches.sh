#!/usr/bin/env bash
# The compile-cache key inputs only a GPU can vary (issue 40), each a real pair of "hosts" sharing one
# Inductor and Triton cache directory: host A compiles, host B compiles again with one input changed,
# and the doctor's merge of their reports must predict what B's run did (tests/data/caches/gpu_pair.py).
#   OUT=dir bash tests/gpu_caches.sh [PART ...]   parts: same fp-fusion ptxas
#   same       nothing changed: an FX graph hit, no Triton kernel compiled again, no difference predicted
#   fp-fusion  TRITON_DEFAULT_FP_FUSION=0 (in Triton's own list of cache-invalidating variables): the FX
#              graph still hits (its key does not hold Triton's variables), every Triton kernel is compiled
#              again; the doctor names triton-env:TRITON_DEFAULT_FP_FUSION (Triton kernel keys)
#   ptxas      TRITON_PTXAS_PATH=the CUDA toolkit's ptxas, where there is one and its release is not the
#              bundled one's: Triton's backend hash differs; the doctor names ptxas. Measured on torch 2.11
#              (sixth pass): the FX graph hit and nothing was compiled again (its bundled kernels loaded)
# Each part writes PART.txt (the pair's JSON) under $OUT and one timing line to $OUT/times.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
# shellcheck source=tests/gpu_lib.sh
. tests/gpu_lib.sh

pair() { "$PY" tests/data/caches/gpu_pair.py "$OUT/$1-dirs" "${@:2}"; }

for p in "${@:-same fp-fusion ptxas}"; do
  for name in $p; do
    case $name in
      same) part caches-same pair same ;;
      fp-fusion) part caches-fp-fusion pair fp-fusion TRITON_DEFAULT_FP_FUSION=0 ;;
      ptxas)
        PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null || true)
        if [ -n "$PTXAS" ]; then
          part caches-ptxas pair ptxas "TRITON_PTXAS_PATH=$PTXAS"
        else
          echo "no CUDA toolkit ptxas on this host: the ptxas pair is not run" | tee "$OUT/caches-ptxas.txt"
        fi ;;
      *) echo "unknown part: $name" >&2; exit 2 ;;
    esac
  done
done
echo "results in $OUT"
