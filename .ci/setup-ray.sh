#!/usr/bin/env bash
# What the Ray suite (tests/test_executors.py) needs besides the `ray` extra of pyproject.toml: unshare and
# nsenter (util-linux) and ip (iproute2), to run its two-node cluster in a network namespace with only
# loopback. Idempotent: installs only what is missing.
set -euo pipefail

missing=()
command -v unshare >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-ray: unshare, nsenter and ip present"
else
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup-ray: installing ${missing[*]} from Debian"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
python3 -c "import ray; print('setup-ray: ray', ray.__version__)"
