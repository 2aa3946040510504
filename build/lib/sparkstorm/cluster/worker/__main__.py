"""Entry point of a worker process (see :mod:`sparkstorm.cluster.worker`)."""

from __future__ import annotations

import sys

from sparkstorm.cluster.worker.worker import main

if __name__ == "__main__":
    sys.exit(main())
