#!/usr/bin/env bash
# Make a PyPy environment for executor processes: Debian's pypy3 plus a venv with the
# packages sparkstorm's executor imports (msgpack, pyyaml), from PyPI.
#
# Idempotent: installs Debian's `pypy3` with apt-get only when it is missing, and (re)makes
# the venv only when its packages do not import. The venv holds no sparkstorm: the pool puts
# the driver's source folders on the executors' PYTHONPATH (engine/executor/interpreter.py).
# Used by `make bench-pypy` (benchmarks/executor_interpreters.py). Debian 12's PyPy is
# Python 3.9, older than sparkstorm's 3.11, so executors run under it only from a tree
# rewritten by benchmarks/_py39_tree.py: a measurement, not a supported mode (the README,
# benchmarks/RESULTS.md "PyPy executors").
#
# Usage: scripts/install-pypy.sh [VENV]     VENV defaults to .venv-pypy in the repository
set -euo pipefail

VENV=${1:-$(cd "$(dirname "$0")/.." && pwd)/.venv-pypy}
# the executor's third-party imports, with pyproject's lower bounds
PACKAGES=("msgpack>=1.0" "pyyaml>=6")

if ! command -v pypy3 >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo -n)
    else
        echo "install-pypy: not root and no sudo; install it yourself: apt-get install pypy3" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-pypy: apt-get not found; this script supports Debian/Ubuntu only;" \
            "install PyPy yourself so that pypy3 is on the PATH" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-cache show pypy3 >/dev/null 2>&1; then
        echo "install-pypy: running apt-get update"
        "${SUDO[@]}" apt-get update -qq
    fi
    echo "install-pypy: installing Debian package 'pypy3' with apt-get"
    install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends pypy3 >/dev/null; }
    if ! install; then
        echo "install-pypy: install failed; running apt-get update and retrying"
        "${SUDO[@]}" apt-get update -qq
        install
    fi
fi

if [[ -x $VENV/bin/python ]] && "$VENV/bin/python" -c "import msgpack, yaml" 2>/dev/null; then
    echo "install-pypy: $VENV already has the executor's packages; nothing to do"
    exit 0
fi
echo "install-pypy: making $VENV with $(pypy3 -c 'import sys; print(sys.version.split()[0])')"
rm -rf "$VENV"
pypy3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}"
echo "install-pypy: $VENV/bin/python ready ($("$VENV/bin/python" -c \
    'import msgpack, yaml; print("msgpack", msgpack.version, "pyyaml", yaml.__version__)'))"
