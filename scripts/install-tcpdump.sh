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
if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-tcpdump: not root and no sudo; install it yourself: apt-get install tcpdump" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-tcpdump: apt-get not found; install tcpdump yourself" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends tcpdump >/dev/null; }
if ! install; then
    # stale package lists name versions the mirror no longer has: refresh once and retry
    echo "install-tcpdump: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
echo "install-tcpdump: installed $(dpkg-query -W -f='${Package} ${Version}' tcpdump)"
