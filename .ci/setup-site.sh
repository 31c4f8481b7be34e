#!/usr/bin/env bash
# System packages the site's browser tests need: Debian's Chromium and its chromedriver
# (driven by Selenium at /usr/bin/chromium and /usr/bin/chromedriver; no browser downloads).
# Idempotent: installs only what is missing. Python packages come from the pyproject
# extras `site` and `test`.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-site: chromium and chromedriver present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup-site: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi

echo "setup-site: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
/usr/bin/chromium --version
/usr/bin/chromedriver --version
