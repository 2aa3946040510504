#!/usr/bin/env bash
# Install Debian's PostgreSQL server for the SQL connector tests (tests/integration/spark/test_sql_*.py).
#
# Idempotent: when a PostgreSQL server (initdb) is already installed it prints one line and
# exits at once, so `make services` can call it every time. Otherwise it installs the
# `postgresql` package with apt-get (needs root or sudo). Debian keeps the server programs in
# /usr/lib/postgresql/<version>/bin, off the PATH; the tests look there. The tests run their
# own server (initdb + postgres) on a free loopback port in a temporary folder; this script
# never starts, enables or configures a service.
#
# Usage: scripts/install-postgresql.sh        exit 0 when PostgreSQL is (now) installed
set -euo pipefail

installed() {
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1
}

if installed; then
    echo "install-postgresql: already installed" \
        "($(compgen -G "/usr/lib/postgresql/*/bin/initdb" | tail -1 || command -v initdb));" \
        "nothing to do"
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-postgresql: not root and no sudo; install it yourself: apt-get install postgresql" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-postgresql: apt-get not found; this script supports Debian/Ubuntu only;" \
        "install PostgreSQL yourself so that initdb and postgres are on the PATH" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show postgresql >/dev/null 2>&1; then
    echo "install-postgresql: running apt-get update"
    "${SUDO[@]}" apt-get update -qq
fi
echo "install-postgresql: installing Debian package 'postgresql' with apt-get"
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }
if ! install; then
    echo "install-postgresql: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
# Debian's package may create and start a system cluster where systemd runs; the tests never use it.
echo "install-postgresql: installed $(dpkg-query -W -f='${Package} ${Version}' postgresql)"
