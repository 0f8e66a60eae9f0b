#!/usr/bin/env bash
# Debian's redis-server for the `httpsify sweep --queue` tests (they start their own instance on a
# free port; nothing runs as a service). Idempotent: installs nothing when it is there.
set -euo pipefail
if [ -x /usr/bin/redis-server ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y redis-server
