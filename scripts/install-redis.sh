#!/usr/bin/env bash
# Install Debian's Redis server for the state tests (tests/integration/redis/).
#
# Idempotent: when redis-server is already on the PATH it prints one line and exits at once,
# so `make services` can call it every time. Otherwise it installs the `redis-server` package
# with apt-get (needs root or sudo). The tests start their own server on a free loopback
# port; this script never starts, enables or configures a service.
#
# Usage: scripts/install-redis.sh        exit 0 when redis-server is (now) installed
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
    echo "install-redis: already installed ($(command -v redis-server)); nothing to do"
    exit 0
fi

source "$(dirname "$0")/apt-install.sh"
# Debian's package may start a system service where systemd runs; the tests never use it.
apt_install install-redis redis-server "redis-server is on the PATH"
