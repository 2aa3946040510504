#!/usr/bin/env bash
# Install Debian's nftables for the packet-loss fault of the chaos suite on the test hosts
# (tests/integration/hosts/test_chaos_hosts.py): an nft rule on a host's eth0 drops a share of
# its packets at random (`numgen random mod 100 < 30 drop`). Kernels without sch_netem (no
# `tc qdisc ... netem`) still have nf_tables.
#
# Idempotent: when nft is on the PATH it prints one line and exits at once. Otherwise it
# installs the `nftables` package with apt-get (needs root or sudo).
#
# Usage: scripts/install-nftables.sh        exit 0 when nft is (now) installed
set -euo pipefail

if command -v nft >/dev/null 2>&1; then
    echo "install-nftables: already installed ($(command -v nft)); nothing to do"
    exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install install-nftables nftables "nft is on the PATH"
