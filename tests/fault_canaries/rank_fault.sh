#!/bin/sh
# Runs the command line given, except on the rank named by $FAULT_RANK, which misbehaves as $FAULT says:
#   slow  its canaries get a 600 s timeout (with a hanging canary: the rank hangs)
#   die   like slow, and the doctor is SIGKILLed after $FAULT_DIE_AFTER seconds (an OOM kill)
#   stop  the doctor is stopped at once (it never hands its report over, however fast the machine)
#         and SIGKILLed after $FAULT_DIE_AFTER seconds: a rank OOM-killed before it reported
#   leave exits 0 at once, without a word (never joins)
if [ "$RANK" = "$FAULT_RANK" ]; then
  case "$FAULT" in
    slow) export INDUCTOR_DOCTOR_TIMEOUT=600 ;;
    die)
      export INDUCTOR_DOCTOR_TIMEOUT=600
      "$@" &
      pid=$!
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
  esac
fi
exec "$@"
