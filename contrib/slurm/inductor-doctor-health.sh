#!/bin/sh
# Slurm HealthCheckProgram (or Prolog) for the compile stack: drains this node with the doctor's one-line
# reason when its check fails, and resumes it once a later check passes, but only a drain it made itself.
#
#   slurm.conf:  HealthCheckProgram=/usr/local/sbin/inductor-doctor-health.sh
#                HealthCheckInterval=300
#                HealthCheckNodeState=ANY          # drained nodes are checked too, so they can return
#   or:          Prolog=/usr/local/sbin/inductor-doctor-health.sh
#
# The reason names the issue and whose problem it is, as soperator's drains do:
#   [node_problem] inductor-doctor: cxx-compiler-missing on cpu: `g++` is not found: ...
#   [user_problem] inductor-doctor: cache-dir-unwritable on toolchain: ... [TORCHINDUCTOR_CACHE_DIR] ...
# A node problem is the machine's (a compiler, headers, a driver, a read-only cache): drained. A user
# problem is a setting of the environment checked; as HealthCheckProgram that environment is the site's
# (/etc/default/inductor-doctor), so it is drained too, with its own tag; in a Prolog (SLURM_JOB_ID set)
# it is left to the job and only logged. The doctor's verdict is contrib/node-verdict.sh's (its settings
# apply: INDUCTOR_DOCTOR_NODE_ARGS, INDUCTOR_DOCTOR_NODE_TIMEOUT, ...), plus:
#   INDUCTOR_DOCTOR_NODE_VERDICT       that script (default: node-verdict.sh beside this one)
#   INDUCTOR_DOCTOR_NODE_DRAIN_UNKNOWN 1: also drain when the doctor could not give a verdict (default: log only)
# Slurm starts a HealthCheckProgram with no environment but SLURMD_NODENAME: PATH, SLURM_CONF and the
# rest come from the defaults file (node-verdict.sh reads it; so does this script, for scontrol).
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
here=$(cd "$here" && pwd)
for f in "$here/../defaults.sh" "$here/defaults.sh"; do  # in the checkout, or installed beside it
  # shellcheck source=contrib/defaults.sh
  if [ -r "$f" ]; then . "$f"; break; fi
done
verdict=${INDUCTOR_DOCTOR_NODE_VERDICT:-$here/../node-verdict.sh}
[ -x "$verdict" ] || verdict=$here/node-verdict.sh
node=${SLURMD_NODENAME:-$(hostname -s)}
log() { logger -t inductor-doctor "$node: $*" 2>/dev/null || true; printf 'inductor-doctor-health: %s\n' "$*" >&2; }

reason=$("$verdict")
code=$?
current=$(sinfo -h -N -n "$node" -o '%E' 2>/dev/null | head -n 1)
ours=false
case $current in
  "[node_problem] inductor-doctor:"*|"[user_problem] inductor-doctor:"*|"inductor-doctor:"*) ours=true ;;
esac

drain() {
  if [ "$current" = "$1" ]; then return 0; fi  # drained already, for this very reason
  scontrol update NodeName="$node" State=DRAIN Reason="$1" || log "could not drain: $1"
}

case $code in
  0)
    if $ours; then
      scontrol update NodeName="$node" State=RESUME && log "resumed: the compile stack passes again"
    fi
    exit 0 ;;
  1)
    case $reason in
      "[user_problem]"*)
        if [ -n "${SLURM_JOB_ID:-}" ]; then
          log "job $SLURM_JOB_ID: $reason"  # the job's own setting: the node stays in service
          exit 0
        fi ;;
    esac
    drain "$reason"
    log "drained: $reason"
    exit 0 ;;
  *)
    log "$reason"
    if [ "${INDUCTOR_DOCTOR_NODE_DRAIN_UNKNOWN:-0}" = 1 ]; then
      drain "[node_problem] $reason"
    fi
    exit 0 ;;
esac
