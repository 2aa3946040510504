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

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-redis: not root and no sudo; install it yourself: apt-get install redis-server" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-redis: apt-get not found; this script supports Debian/Ubuntu only;" \
        "install Redis yourself so that redis-server is on the PATH" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show redis-server >/dev/null 2>&1; then
    echo "install-redis: running apt-get update"
    "${SUDO[@]}" apt-get update -qq
fi
echo "install-redis: installing Debian package 'redis-server' with apt-get"
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }
if ! install; then
    echo "install-redis: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
# Debian's package may start a system service where systemd runs; the tests never use it.
echo "install-redis: installed $(dpkg-query -W -f='${Package} ${Version}' redis-server)"
