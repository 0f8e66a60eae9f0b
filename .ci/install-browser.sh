#!/usr/bin/env bash
# Debian's Chromium and Firefox ESR for the extension's end-to-end tests (never a downloaded
# browser build). Idempotent: installs only what is missing, nothing when both are there.
set -euo pipefail
MISSING=()
[ -x /usr/bin/chromium ] || MISSING+=(chromium)
[ -x /usr/bin/firefox-esr ] || MISSING+=(firefox-esr)
if [ "${#MISSING[@]}" -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${MISSING[@]}"
