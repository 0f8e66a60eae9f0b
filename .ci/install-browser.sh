#!/usr/bin/env bash
# Debian's Chromium for the extension's end-to-end tests (never a downloaded browser build).
# Idempotent: does nothing when /usr/bin/chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
