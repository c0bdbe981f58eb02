#!/usr/bin/env bash
# The fleet pass on a multi-GPU host (docs/gpu-verification.md, "Fleet pass on 2 and 4 GPUs"): one rank
# per GPU under torchrun, `check --distributed` healthy and with one rank set up differently, a rank per
# GPU and more ranks than GPUs, the node verdict, and the fleet mode's costs. Every part writes PART.txt
# (and PART.json) under $OUT and one timing line to $OUT/times.txt; `summary.txt` says, per state, what
# was expected and whether the output shows it (tests/gpu_fleet_check.py).
#   OUT=dir bash tests/gpu_fleet.sh [PART ...]
#   parts: healthy hidden cache triton bind localrank extra verdict bench (default: all, in that order)
# No package index is needed. A Triton wheel of another release in .whl/fleet/ (any triton-*.whl) is used
# for the "own Triton" state; without one, rank 1 imports a copy of the installed Triton from its own
# PYTHONPATH entry. Each part has a time limit and the pass goes on after a failed part.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
# shellcheck source=tests/gpu_lib.sh
. tests/gpu_lib.sh
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$(mktemp -d)}
"$PY" -m compileall -q inductor_doctor >/dev/null 2>&1
LIMIT=${PART_LIMIT:-600}
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")}
[ "$NGPU" -ge 1 ] || NGPU=1
echo "host $(hostname): $NGPU GPU(s), $(nproc) CPUs; $("$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1)" \
  | tee "$OUT/host.txt"
nvidia-smi -L >>"$OUT/host.txt" 2>&1
PORT=29610
WRAP=tests/fault_canaries/rank_fault.sh
RANK_ENV=""

# torchrun_check NAME NPROC [ENV=VALUE...] -- [check options]: one torchrun of `check --distributed`, rank 1
# under those variables (tests/fault_canaries/rank_fault.sh), the fleet view's JSON in NAME.json, torchrun's
# and the ranks' stderr in NAME.txt (tests/gpu_fleet_check.py renders NAME.view.txt from the JSON).
_torchrun() {
  local json=$1 nproc=$2
  shift 2
  env FAULT=env FAULT_RANK=1 FAULT_ENV="$RANK_ENV" timeout -k 10 "$LIMIT" "$PY" -m torch.distributed.run \
    --nproc-per-node "$nproc" --master-port "$PORT" --no-python sh "$WRAP" \
    "$PY" -m inductor_doctor check --distributed --format json "$@" >"$json"
}
torchrun_check() {
  local name=$1 nproc=$2
  shift 2
  RANK_ENV=""
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do RANK_ENV="$RANK_ENV $1"; shift; done
  RANK_ENV=${RANK_ENV# }
  [ "${1:-}" = "--" ] && shift
  PORT=$((PORT + 1))
  part "$name" _torchrun "$OUT/$name.json" "$nproc" "$@"
}

run_part() {
  case $1 in
    healthy)  # one rank per GPU, every canary on every GPU (the result cache is $OUT/doctor-cache)
      torchrun_check healthy "$NGPU" -- --timeout 300
      torchrun_check healthy-repeat "$NGPU" -- --timeout 300 ;;  # the same check: a canary's timeout is in its key
    hidden)  # rank 1 sees no GPU: cuda-devices-hidden affected on its own column
      torchrun_check hidden "$NGPU" "CUDA_VISIBLE_DEVICES=" -- --static ;;
    cache)  # rank 1 has caches of its own
      torchrun_check cache "$NGPU" "TRITON_CACHE_DIR=$OUT/rank1-cache/triton" \
        "TORCHINDUCTOR_CACHE_DIR=$OUT/rank1-cache/inductor" -- --static ;;
    triton)  # rank 1 imports a Triton of its own from PYTHONPATH
      local site="$OUT/rank1-triton"
      rm -rf "$site" && mkdir -p "$site"
      if ls .whl/fleet/triton-*.whl >/dev/null 2>&1; then
        "$PY" -m pip install -q --no-index --no-deps --target "$site" .whl/fleet/triton-*.whl >"$OUT/triton-install.txt" 2>&1
      else
        cp -r "$("$PY" -c 'import os, triton; print(os.path.dirname(triton.__file__))')" "$site/triton"
      fi
      torchrun_check triton "$NGPU" "PYTHONPATH=$site:$PYTHONPATH" -- --static ;;
    bind)  # rank 1 bound to its GPU by CUDA_VISIBLE_DEVICES=$LOCAL_RANK (what srun --gpu-bind does)
      torchrun_check bind "$NGPU" "CUDA_VISIBLE_DEVICES=1" -- --static ;;
    localrank)  # a wrapper rewrote rank 1's LOCAL_RANK to 0: two ranks on cuda:0
      torchrun_check localrank "$NGPU" "LOCAL_RANK=0" -- --static ;;
    extra)  # two ranks more than GPUs: the extra ranks have no GPU of their own
      torchrun_check extra $((NGPU + 2)) -- --static ;;
    verdict)  # one node's verdict for a fleet engine, healthy and with the GPUs hidden
      part verdict-healthy "$PY" -m inductor_doctor check --format node-verdict -q --output "$OUT/verdict-healthy.json"
      part verdict-hidden env CUDA_VISIBLE_DEVICES= "$PY" -m inductor_doctor check --static --format node-verdict \
        -q --output "$OUT/verdict-hidden.json"
      part verdict-script env INDUCTOR_DOCTOR_NODE_COMMAND="$PY -m inductor_doctor" \
        INDUCTOR_DOCTOR_NODE_DIR="$OUT/node-verdict" INDUCTOR_DOCTOR_NODE_DEFAULTS=/nonexistent \
        sh contrib/node-verdict.sh ;;
    bench)  # what the fleet mode costs here: the distributed check, and a repeated check of this node
      part bench-distributed timeout -k 10 "$LIMIT" "$PY" bench/bench_fleet.py --repeat 3
      part bench-repeated timeout -k 10 "$LIMIT" "$PY" bench/bench_fleet.py --repeated --repeat 10 ;;
    *) echo "unknown part $1" >&2; return 2 ;;
  esac
}

for p in "${@:-healthy hidden cache triton bind localrank extra verdict bench}"; do
  for name in $p; do run_part "$name"; done
done
"$PY" tests/gpu_fleet_check.py "$OUT" "$NGPU" | tee "$OUT/summary.txt"
