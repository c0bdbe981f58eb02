# Sourced by the GPU host's scripts (gpu_pass.sh, gpu_artifacts.sh): the checkout on PYTHONPATH, the
# extra wheels waiting in .whl/ (pyelftools, jsonschema, ...) installed beside, never into, the
# interpreter under test, and `part`, which runs one step, keeps its output and times it.
# Expects OUT and PY to be set; run from the checkout's root.
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  SITE=$(mktemp -d)
  "$PY" -m pip install -q --no-index --no-deps --target "$SITE" .whl/*.whl >/dev/null 2>&1
  export PYTHONPATH="$SITE"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export INDUCTOR_DOCTOR_CACHE_DIR="$OUT/doctor-cache"

part() {  # part NAME COMMAND...: run it, keep its output in $OUT/NAME.txt, one timing line in times.txt
  local name=$1 start rc
  shift
  start=$EPOCHREALTIME
  "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  awk -v n="$name" -v rc="$rc" -v s="$start" -v e="$EPOCHREALTIME" \
    'BEGIN { printf "%-22s rc=%-3s %8.2f s\n", n, rc, e - s }' | tee -a "$OUT/times.txt"
}
