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

source "$(dirname "$0")/apt-install.sh"
apt_install install-zookeeper zookeeper "$ZK_HOME exists"
echo "install-zookeeper: at $ZK_SERVER, $ZK_JAR"
