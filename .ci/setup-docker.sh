#!/usr/bin/env bash
# Make a Docker daemon answer on this machine and a local base image exist, idempotently.
#   - installs docker.io and debootstrap from Debian when missing
#   - starts dockerd in the background when `docker info` fails, waits until it answers (60 s)
#   - builds the local base image (${XLAKB_DOCKER_IMAGE:-xlakb-base:bookworm}) when it is missing
# Prints what it did; exits non-zero with a clear message when it cannot.
set -euo pipefail

IMAGE="${XLAKB_DOCKER_IMAGE:-xlakb-base:bookworm}"
DOCKERD_LOG="${XLAKB_DOCKERD_LOG:-/var/log/xlakb-dockerd.log}"
WAIT_S="${XLAKB_DOCKERD_WAIT:-60}"
PYTHON="${PYTHON:-python3}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

say() { echo "setup-docker: $*"; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} from Debian"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    say "docker.io and debootstrap already installed"
fi

if docker info >/dev/null 2>&1; then
    say "a Docker daemon already answers"
else
    say "starting dockerd in the background (log: $DOCKERD_LOG)"
    $SUDO mkdir -p "$(dirname "$DOCKERD_LOG")"
    # its own session, so it outlives this script; containerd is started by dockerd itself
    $SUDO setsid -f sh -c "exec dockerd >>'$DOCKERD_LOG' 2>&1 </dev/null"
    waited=0
    until docker info >/dev/null 2>&1; do
        if [ "$waited" -ge "$WAIT_S" ]; then
            echo "setup-docker: dockerd did not answer within ${WAIT_S} s; last lines of $DOCKERD_LOG:" >&2
            tail -n 20 "$DOCKERD_LOG" >&2 || true
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    say "dockerd ready after ${waited} s"
fi

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "base image $IMAGE present"
else
    say "building base image $IMAGE (debootstrap, a few minutes)"
    "$PYTHON" -m xlakb.envs.docker_image --tag "$IMAGE"
fi
say "done: export XLAKB_DOCKER_IMAGE=$IMAGE"
