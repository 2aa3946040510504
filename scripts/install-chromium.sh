#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests (tests/browser/), driven by Playwright.
#
# Idempotent: when /usr/bin/chromium exists it prints one line and exits at once, so
# `make test` can call it every time. Otherwise it installs the `chromium` package with
# apt-get (needs root or sudo). Playwright's own browser download is never used.
#
# Usage: scripts/install-chromium.sh        exit 0 when Chromium is (now) installed
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [[ -x $CHROMIUM ]]; then
    echo "install-chromium: already installed ($CHROMIUM); nothing to do"
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "install-chromium: not root and no sudo; install it yourself: apt-get install chromium" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: apt-get not found; this script supports Debian/Ubuntu only;" \
        "install Chromium yourself so that $CHROMIUM exists" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium >/dev/null 2>&1; then
    echo "install-chromium: running apt-get update"
    "${SUDO[@]}" apt-get update -qq
fi
echo "install-chromium: installing Debian package 'chromium' with apt-get"
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
if ! install; then
    # stale package lists name versions the mirror no longer has: refresh once and retry
    echo "install-chromium: install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -qq
    install
fi
echo "install-chromium: installed $(dpkg-query -W -f='${Package} ${Version}' chromium) ($CHROMIUM)"
