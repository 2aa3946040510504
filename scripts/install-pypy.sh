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
    source "$(dirname "$0")/apt-install.sh"
    apt_install install-pypy pypy3 "pypy3 is on the PATH"
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
