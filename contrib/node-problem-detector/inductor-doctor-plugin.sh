#!/bin/sh
# node-problem-detector custom plugin: exit 0 OK, 1 a problem, anything else unknown; stdout the message.
#
# node-problem-detector's own image has no torch, and the compile stack to check is the training
# image's. So the check runs in the training image (contrib/kubernetes/inductor-doctor-daemonset.yaml,
# which keeps its verdict in a hostPath directory) and this plugin only reads that verdict:
#   <dir>/verdict.txt   one line, "EXIT REASON" (contrib/node-verdict.sh writes it)
# Where the doctor is installed beside node-problem-detector, set INDUCTOR_DOCTOR_NODE_COMMAND and the
# plugin runs the check itself instead.
#   INDUCTOR_DOCTOR_NODE_DIR     the verdict's directory (default /var/lib/inductor-doctor)
#   INDUCTOR_DOCTOR_NODE_MAX_AGE seconds after which a verdict is too old to stand for the node: unknown
#                                (default 1800; the DaemonSet checks every 300)
dir=${INDUCTOR_DOCTOR_NODE_DIR:-/var/lib/inductor-doctor}
if [ -n "${INDUCTOR_DOCTOR_NODE_COMMAND:-}" ]; then
  here=$(cd "$(dirname "$0")" && pwd)
  exec "$here/../node-verdict.sh"
fi
file=$dir/verdict.txt
if [ ! -r "$file" ]; then
  echo "inductor-doctor: no verdict yet in $dir (is the inductor-doctor DaemonSet running on this node?)"
  exit 2
fi
age=$(( $(date +%s) - $(stat -c %Y "$file") ))
if [ "$age" -gt "${INDUCTOR_DOCTOR_NODE_MAX_AGE:-1800}" ]; then
  echo "inductor-doctor: the last verdict is ${age}s old (the DaemonSet has stopped checking)"
  exit 2
fi
read -r code reason <"$file"
printf '%s\n' "$reason"
case $code in
  0|1) exit "$code" ;;
  *) exit 2 ;;
esac
