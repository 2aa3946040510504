#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests (tests/browser/), driven by Playwright.
#
# Idempotent: when /usr/bin/chromium exists it prints one line and exits at once, so
# `make test` can call it every time. Otherwise it installs the `chromium` package with
# apt-get (needs root or sudo). Playwright's own browser download is never used.
#
# Usage: scripts/install-chromium.sh        exit 0 when Chromium is (now) installed
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [[ -x $CHROMIUM ]]; then
    echo "install-chromium: already installed ($CHROMIUM); nothing to do"
    exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-chromium chromium "$CHROMIUM exists"
echo "install-chromium: at $CHROMIUM"
