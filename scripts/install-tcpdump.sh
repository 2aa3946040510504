#!/usr/bin/env bash
# Install Debian's tcpdump for the TLS capture test on the test hosts
# (tests/integration/hosts/test_tls_capture.py): it records what crosses the hosts' bridge.
#
# Idempotent: when tcpdump is on the PATH it prints one line and exits at once. Otherwise it
# installs the `tcpdump` package with apt-get (needs root or sudo).
#
# Usage: scripts/install-tcpdump.sh        exit 0 when tcpdump is (now) installed
set -euo pipefail

if command -v tcpdump >/dev/null 2>&1; then
    echo "install-tcpdump: already installed ($(command -v tcpdump)); nothing to do"
    exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-tcpdump tcpdump "tcpdump is on the PATH"
