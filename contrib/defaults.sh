# Sourced by the adapters (node-verdict.sh, slurm/inductor-doctor-health.sh): the site's settings from
# $INDUCTOR_DOCTOR_NODE_DEFAULTS (default /etc/default/inductor-doctor), VAR=value lines, exported; then a
# PATH for a program an engine starts with no environment (Slurm gives a HealthCheckProgram none).
defaults=${INDUCTOR_DOCTOR_NODE_DEFAULTS:-/etc/default/inductor-doctor}
if [ -r "$defaults" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$defaults"
  set +a
fi
: "${PATH:=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"
export PATH
