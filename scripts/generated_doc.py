"""The command line both docs generators share: write a generated page, or ``--check`` it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(description: str, render: Callable[[], str], output: Path, root: Path,
                   summary: str, argv: list[str] | None = None) -> int:
    """Write ``render()`` to ``output``; with ``--check``, exit 1 when the file differs.

    ``summary`` is printed after the path once written (e.g. ``"158 keys"``).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = output.exists() and output.read_text(encoding="utf-8") == text
        if not current:
            print(f"{output.relative_to(root)} is stale: run make docs", file=sys.stderr)
        return 0 if current else 1
    output.parent.mkdir(exist_ok=True)
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output.relative_to(root)} ({summary})")
    return 0
