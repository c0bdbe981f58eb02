#!/usr/bin/env bash
# Builds what the real container build (tests/house/test_container_build.py, `pytest -m container`) needs,
# once, outside the checkout, under ~/.cache/inductor-doctor-tests/container (ready when .ready exists):
#   * podman with runc, and debootstrap, from Debian's packages;
#   * podman's own configuration and storage in that directory (CONTAINERS_CONF,
#     CONTAINERS_STORAGE_CONF), so the machine's containers.conf and image store are left alone:
#     runc rather than crun (crun refuses hybrid cgroup hierarchies), cgroupfs rather than systemd,
#     no default ulimits (a nested container may not raise them); `./podman` runs podman so;
#   * the base images, made locally (no image registry is needed, only Debian's packages):
#     indoc-test-base:nocc is `debootstrap --variant=minbase bookworm` with python3, python3-venv,
#     python3-dev and ca-certificates, and no compiler; indoc-test-base:bookworm adds g++;
#   * a wheelhouse with the recipe's requirements (torch, triton, numpy) and their dependencies,
#     resolved by this host's pip (its own find-links and indexes: a CPU torch on local disk where
#     there is one), so a build installs them from it instead of downloading them.
# Usage: tests/envs/build_container.sh   (again: nothing to do once .ready exists)
set -euo pipefail
ROOT=${INDUCTOR_DOCTOR_TEST_ENVS:-$HOME/.cache/inductor-doctor-tests}
DIR=$ROOT/container
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
MIRROR=${INDUCTOR_DOCTOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ -f "$DIR/.ready" ] && { echo "container: cached at $DIR"; exit 0; }
echo "container: building at $DIR"
start=$(date +%s)
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
for cmd in podman runc debootstrap; do command -v "$cmd" >/dev/null || missing+=("$cmd"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$DIR"
cat > "$DIR/containers.conf" <<'EOF'
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
EOF
cat > "$DIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$DIR/storage"
runroot = "$DIR/run"
EOF
cat > "$DIR/podman" <<EOF
#!/bin/sh
# podman with the test's own configuration and storage (tests/envs/build_container.sh)
CONTAINERS_CONF="$DIR/containers.conf" CONTAINERS_STORAGE_CONF="$DIR/storage.conf" exec podman "\$@"
EOF
chmod 755 "$DIR/podman"
PODMAN="$DIR/podman"

# A half-built store from an interrupted run is started again from nothing.
"$PODMAN" rmi -f localhost/indoc-test-base:nocc localhost/indoc-test-base:bookworm >/dev/null 2>&1 || true
rootfs="$DIR/rootfs"
$SUDO rm -rf "$rootfs"
$SUDO debootstrap --variant=minbase --include=python3,python3-venv,python3-dev,ca-certificates \
  bookworm "$rootfs" "$MIRROR" >"$DIR/debootstrap.log" 2>&1 || { tail -20 "$DIR/debootstrap.log"; exit 1; }
$SUDO rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
$SUDO tar -C "$rootfs" -c . | "$PODMAN" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' - localhost/indoc-test-base:nocc >/dev/null
$SUDO rm -rf "$rootfs"
ctx=$(mktemp -d)
printf '%s\n' 'FROM localhost/indoc-test-base:nocc' \
  'RUN apt-get update && apt-get install -y --no-install-recommends g++ && rm -rf /var/lib/apt/lists/*' \
  > "$ctx/Containerfile"
"$PODMAN" build --network=host -q -t localhost/indoc-test-base:bookworm "$ctx" >/dev/null
rm -rf "$ctx"

# The recipe's requirements (docs/docker.md's requirements.txt, less its CUDA index line) as this
# host's pip finds them, for the images' Python (3.11): torch is the CPU build where the host's pip
# has one (its find-links), so no CUDA wheels are fetched.
mapfile -t REQS < <("$PY" - "$HERE/docs/docker.md" <<'PYEOF'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
body = re.search(r"^```text recipe-file=requirements.txt\n(.*?)^```", page, re.M | re.S).group(1)
print("\n".join(ln for ln in body.splitlines() if ln.strip() and not ln.startswith("-")))
PYEOF
)
rm -rf "$DIR/wheels"
"$PY" -m pip download -q --disable-pip-version-check -d "$DIR/wheels" --only-binary=:all: \
  --python-version 3.11 --implementation cp --platform manylinux_2_28_x86_64 "${REQS[@]}"
touch "$DIR/.ready"
echo "container: ready in $(( $(date +%s) - start ))s"
