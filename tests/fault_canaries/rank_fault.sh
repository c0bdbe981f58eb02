#!/bin/sh
# Runs the command line given, except on the rank named by $FAULT_RANK, which misbehaves as $FAULT says:
#   slow  its canaries get a 600 s timeout (with a hanging canary: the rank hangs)
#   die   like slow, and the doctor is SIGKILLed $FAULT_DIE_AFTER seconds after this rank joined (its
#         gather helper holds the store's socket): an OOM kill of a rank that had said hello, however
#         slow the machine is to get there
#   stop  the doctor is stopped at once (it never hands its report over, however fast the machine)
#         and SIGKILLed after $FAULT_DIE_AFTER seconds: a rank OOM-killed before it reported
#   leave exits 0 at once, without a word (never joins)
#   env   runs with $FAULT_ENV's NAME=VALUE words exported (a rank set up differently: its own
#         CUDA_VISIBLE_DEVICES, cache directory, PYTHONPATH, a rewritten LOCAL_RANK)
descendants() {  # every process below $1
  for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done
}
joined() {  # $1's gather helper is connected to the store: a socket among its file descriptors
  for p in $(descendants "$1"); do
    case "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" in
      *gather.py*) ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'socket:' && return 0 ;;
    esac
  done
  return 1
}
if [ "$RANK" = "$FAULT_RANK" ]; then
  case "$FAULT" in
    slow) export INDUCTOR_DOCTOR_TIMEOUT=600 ;;
    die)
      export INDUCTOR_DOCTOR_TIMEOUT=600
      "$@" &
      pid=$!
      waited=0
      until joined "$pid" || [ "$waited" -ge 1200 ]; do sleep 0.1; waited=$((waited + 1)); done
      sleep "${FAULT_DIE_AFTER:-8}"
      kill -9 "$pid"
      exit 137 ;;
    stop)
      "$@" &
      pid=$!
      kill -STOP "$pid"
      sleep "${FAULT_DIE_AFTER:-8}"
      kill -9 "$pid"
      exit 137 ;;
    leave) exit 0 ;;
    env) for kv in $FAULT_ENV; do export "$kv"; done ;;
  esac
fi
exec "$@"
