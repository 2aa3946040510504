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

source "$(dirname "$0")/apt-install.sh"
# Debian's package may create and start a system cluster where systemd runs; the tests never use it.
apt_install install-postgresql postgresql "initdb and postgres are on the PATH"
