#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for tests/test_report.py (the balance report's HTML is
# loaded in `chromium --headless` to check that it renders and every embedded image decodes).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo) and apt.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    echo "chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium
/usr/bin/chromium --version
