"""``python -m sparkstorm.multilang [--serializer json|msgpack] pkg.module:Class``.

Runs one of our Python spouts or bolts as a Storm multilang subprocess (see ``runtime``).
"""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO

from sparkstorm.multilang.runtime import protect_stdout, run
from sparkstorm.multilang.serializer import serializer_for
from sparkstorm.topology.spec import load_class


def main(argv: list[str] | None = None, infile: BinaryIO | None = None,
         outfile: BinaryIO | None = None) -> int:
    """Parse the command line and run the component; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m sparkstorm.multilang",
        description="Run a sparkstorm Spout or Bolt class as a Storm multilang subprocess.")
    parser.add_argument("component", help="import path of the class, module:QualName")
    parser.add_argument("--serializer", default="json", help="json (default) or msgpack")
    parser.add_argument("--path", action="append", default=[],
                        help="directory to put on sys.path first (repeatable)")
    args = parser.parse_args(argv)
    sys.path[:0] = args.path
    # a child may send NaN and Infinity: our host and Storm's both accept them
    serializer = serializer_for(args.serializer, where="--serializer", allow_nan=True)
    cls = load_class(args.component, component=args.component)
    if outfile is None:
        outfile = protect_stdout()
    return run(cls, infile or sys.stdin.buffer, outfile, serializer)


if __name__ == "__main__":
    sys.exit(main())
