"""``sparkstorm``: the command line entry point, one module per subcommand."""

from __future__ import annotations

import argparse
import logging
import sys

from sparkstorm.cli import (
    cluster_usage,
    daemons,
    dev_zookeeper,
    monitor,
    pack_env,
    quickstart,
    remove_logs,
    run,
    spark_submit,
    stats,
    submit,
    tail,
    tls,
    topology_actions,
    visualize,
)
from sparkstorm.errors import SparkstormError
from sparkstorm.web import cli as ui


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="sparkstorm", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    commands = parser.add_subparsers(dest="command", required=True)
    run.register(commands)
    submit.register(commands)
    spark_submit.register(commands)
    pack_env.register(commands)
    quickstart.register(commands)
    topology_actions.register(commands)
    monitor.register(commands)
    stats.register(commands)
    tail.register(commands)
    remove_logs.register(commands)
    cluster_usage.register(commands)
    visualize.register(commands)
    daemons.register(commands)
    dev_zookeeper.register(commands)
    tls.register(commands)
    ui.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the subcommand, turn our errors into a message and exit code 2."""
    own, passed_on = spark_submit.split_passthrough(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(own)
    if passed_on:
        args.spark_args = passed_on
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    try:
        return int(args.handler(args))
    except SparkstormError as exc:
        print(f"sparkstorm {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
