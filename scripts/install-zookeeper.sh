#!/usr/bin/env bash
# Install Debian's ZooKeeper server for the integration tests (tests/integration/zookeeper/).
#
# Idempotent: when the package's files are already present it prints one line and exits at
# once (well under a second), so `make test` can call it every time. Otherwise it installs the
# `zookeeper` package with apt-get (needs root or sudo). The tests start their own server on a
# free loopback port; this script never starts, enables or configures a service.
#
# Usage: scripts/install-zookeeper.sh        exit 0 when ZooKeeper is (now) installed
set -euo pipefail

ZK_HOME=/usr/share/zookeeper
ZK_SERVER=$ZK_HOME/bin/zkServer.sh
# The server classes live in libzookeeper-java's jar; its manifest lists the other jars.
ZK_JAR=/usr/share/java/zookeeper.jar

if [[ -x $ZK_SERVER && -f $ZK_JAR ]]; then
    echo "install-zookeeper: already installed ($ZK_SERVER, $ZK_JAR); nothing to do"
    exit 0
fi
# The tests also run an unpacked Apache release named by ZOOKEEPER_HOME.
if [[ -n ${ZOOKEEPER_HOME:-} ]] && compgen -G "$ZOOKEEPER_HOME/lib/*.jar" >/dev/null; then
    echo "install-zookeeper: using ZOOKEEPER_HOME=$ZOOKEEPER_HOME; nothing to do"
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-zookeeper: not root and no sudo; install it yourself: apt-get install zookeeper" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-zookeeper: apt-get not found; this script supports Debian/Ubuntu only;" \
        "install ZooKeeper yourself so that $ZK_HOME exists" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Only refresh the package lists when apt does not know the package yet (a fresh image).
if ! apt-cache show zookeeper >/dev/null 2>&1; then
    echo "install-zookeeper: running apt-get update"
    "${SUDO[@]}" apt-get update -qq
fi
echo "install-zookeeper: installing Debian package 'zookeeper' with apt-get"
# --no-install-recommends keeps zookeeperd (the system service) out: tests run their own server.
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends zookeeper >/dev/null; }
if ! install; then
    # stale package lists name versions the mirror no longer has: refresh once and retry
    echo "install-zookeeper: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
echo "install-zookeeper: installed $(dpkg-query -W -f='${Package} ${Version}' zookeeper) ($ZK_SERVER, $ZK_JAR)"
