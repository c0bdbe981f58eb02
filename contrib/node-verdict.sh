#!/bin/sh
# inductor-doctor's node verdict, for any fleet engine: runs `inductor-doctor check --format node-verdict`,
# keeps the verdict, prints its one line of reason, and exits as the doctor did: 0 healthy, 1 a problem,
# anything else unknown (2 a usage error, 3 the doctor's own failure, 124 it ran past its time).
#
# The engines' adapters call it (contrib/slurm, contrib/node-problem-detector, contrib/kubernetes);
# docs/fleet.md says how. Settings come from the environment, or from the defaults file it reads first:
#   INDUCTOR_DOCTOR_NODE_DEFAULTS  a file of VAR=value lines to read (default /etc/default/inductor-doctor)
#   INDUCTOR_DOCTOR_NODE_COMMAND   the doctor (default: inductor-doctor; e.g. "/opt/venv/bin/python -m inductor_doctor")
#   INDUCTOR_DOCTOR_NODE_ARGS      check's options (default: --static: versions, files, symbols, in about a
#                                  second; "" adds the canaries, answered from the result cache when nothing
#                                  changed)
#   INDUCTOR_DOCTOR_NODE_DIR       keep verdict.json (the document) and verdict.txt ("EXIT REASON", one line)
#                                  there, for a reader that has no doctor (a node-problem-detector plugin)
#   INDUCTOR_DOCTOR_NODE_TIMEOUT   seconds before the check is stopped, as unknown (default 50)
# and every check option as usual (INDUCTOR_DOCTOR_PYTHON, INDUCTOR_DOCTOR_FAIL_ON, INDUCTOR_DOCTOR_CACHE_DIR...).
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
here=$(cd "$here" && pwd)
# shellcheck source=contrib/defaults.sh
if [ -r "$here/defaults.sh" ]; then . "$here/defaults.sh"; fi  # absent where only this script ships (a ConfigMap)
: "${PATH:=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"
export PATH
# A health check program starts with no HOME; the doctor's result cache lives under it by default.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
  export HOME
fi
doctor=${INDUCTOR_DOCTOR_NODE_COMMAND:-inductor-doctor}
args=${INDUCTOR_DOCTOR_NODE_ARGS---static}
dir=${INDUCTOR_DOCTOR_NODE_DIR:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/inductor-doctor-verdict.XXXXXX") || exit 3
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086  # the command and the options are words
timeout -k 5 "${INDUCTOR_DOCTOR_NODE_TIMEOUT:-50}" $doctor check $args --format node-verdict --quiet \
  --output "$work/verdict.json" 2>"$work/stderr"
code=$?
reason=""
if [ -s "$work/verdict.json" ]; then
  # The document's own one line (at most 200 characters, no newline): `"reason": "..."` of its JSON.
  reason=$(sed -n 's/^  "reason": "\(.*\)",$/\1/p' "$work/verdict.json" | sed 's/\\"/"/g; s/\\\\/\\/g' | head -n 1)
fi
if [ -z "$reason" ]; then
  case $code in
    124|137) why="ran past ${INDUCTOR_DOCTOR_NODE_TIMEOUT:-50}s" ;;
    *) why=$(grep -v '^\s*$' "$work/stderr" | tail -n 1 | cut -c1-150) ;;
  esac
  reason="inductor-doctor: no verdict (exit $code): ${why:-no output}"
  # No verdict is neither "healthy" nor "a problem": unknown, whatever the exit status said.
  case $code in 0|1) code=3 ;; esac
fi
if [ -n "$dir" ]; then
  mkdir -p "$dir" && {
    [ -s "$work/verdict.json" ] && cp "$work/verdict.json" "$dir/verdict.json.new" \
      && mv -f "$dir/verdict.json.new" "$dir/verdict.json"
    printf '%s %s\n' "$code" "$reason" >"$dir/verdict.txt.new" && mv -f "$dir/verdict.txt.new" "$dir/verdict.txt"
  }
fi
printf '%s\n' "$reason"
exit "$code"
