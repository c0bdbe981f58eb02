# Stage timing and budgets for .ci/run (sourced, bash).
#
#   stage NAME BUDGET_S COMMAND...   run COMMAND as stage NAME; its time is kept against BUDGET_S
#   stage_summary                    the table of every stage: time, budget, verdict (run at exit)
#   stages_verdict                   fails (exit 1) when a stage went more than a third over its budget
#
# A stage fails CI when its command fails, or when it took more than a third over its budget: the
# guard that keeps the next addition from silently breaking CI's 90 minutes. Budgets are for this
# kind of machine (2 cores); CI_BUDGET_SLACK multiplies them on a slower one.
# A stage's budget may differ with cold and warm caches: pass the one that applies.

STAGE_ROWS=()
STAGE_OVER=()
STAGE_T0=$(date +%s)

_stage_limit() {  # budget * 4/3 * slack, in whole seconds
  python3 -c "import sys; print(int(int(sys.argv[1]) * 4 / 3 * float(sys.argv[2])))" "$1" \
    "${CI_BUDGET_SLACK:-1}"
}

stage() {
  local name=$1 budget=$2; shift 2
  local t0 t1 took rc=0 limit verdict
  echo "== $name (budget $((budget / 60)) min $((budget % 60)) s)"
  t0=$(date +%s)
  "$@" || rc=$?
  t1=$(date +%s)
  took=$((t1 - t0))
  limit=$(_stage_limit "$budget")
  verdict="ok"
  if [ "$rc" -ne 0 ]; then
    verdict="FAILED (exit $rc)"
  elif [ "$took" -gt "$limit" ]; then
    verdict="OVER BUDGET (limit $limit s)"
    STAGE_OVER+=("$name")
  fi
  STAGE_ROWS+=("$(printf '%-28s %6d s %6d s  %s' "$name" "$took" "$budget" "$verdict")")
  return "$rc"
}

stage_summary() {
  local total=$(( $(date +%s) - STAGE_T0 ))
  echo
  echo "== where the time went"
  printf '%-28s %8s %8s  %s\n' "stage" "took" "budget" "verdict"
  local row
  for row in "${STAGE_ROWS[@]}"; do echo "$row"; done
  printf '%-28s %6d s\n' "total" "$total"
}

stages_verdict() {
  if [ ${#STAGE_OVER[@]} -gt 0 ]; then
    echo "over budget by more than a third: ${STAGE_OVER[*]}" >&2
    return 1
  fi
}
