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
if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-nftables: not root and no sudo; install it yourself: apt-get install nftables" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-nftables: apt-get not found; install nftables yourself" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends nftables >/dev/null; }
if ! install; then
    # stale package lists name versions the mirror no longer has: refresh once and retry
    echo "install-nftables: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
echo "install-nftables: installed $(dpkg-query -W -f='${Package} ${Version}' nftables)"
