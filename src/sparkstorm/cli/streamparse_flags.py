"""streamparse's topology flags ``-a/--ackers N``, ``-w/--workers N`` and ``-d/--debug``.

As in streamparse (``streamparse/cli/common.py``), each is a spelling of one ``-o KEY=VALUE``
option and lands in the same list as ``-c``/``-o``, in command-line order, so a later
``-o topology.workers=3`` still wins over an earlier ``-w 2``:

- ``-a N``: ``topology.acker.executors=N`` (0 turns acking off);
- ``-w N``: ``topology.workers=N``;
- ``-d``: ``topology.debug=true``: ``sparkstorm run`` logs every tuple each executor emits
  or receives (the debug sampling of Storm UI's Debug action, at 100 %).

streamparse's ``--debug`` takes an optional value; here it takes none, since ``run``'s
positional topology file would be taken for it (``-o topology.debug=false`` says false).

Example:
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("-o", dest="config", action="append", default=[])
    >>> add_streamparse_flags(parser)
    >>> parser.parse_args(["-w", "2", "-d", "-o", "topology.workers=3", "-a", "0"]).config
    ... # doctest: +NORMALIZE_WHITESPACE
    ['topology.workers=2', 'topology.debug=true', 'topology.workers=3',
     'topology.acker.executors=0']
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

ACKERS_KEY = "topology.acker.executors"
WORKERS_KEY = "topology.workers"
DEBUG_KEY = "topology.debug"


class _OptionAlias(argparse.Action):
    """Append ``KEY=VALUE`` to ``config`` (``KEY`` is the action's ``const``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        key, value = str(self.const).split("=", 1) if self.nargs == 0 else (self.const, values)
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(f"{key}={value}")
        setattr(namespace, self.dest, items)


def _count(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            msg = f"expected a whole number of at least {minimum}, got {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return number

    return parse


def add_streamparse_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``-a``, ``-w`` and ``-d`` appending to ``config`` (the ``-c``/``-o`` list).

    A flag the parser already has (another module added it) is left as it is.
    """
    taken = set(parser._option_string_actions)  # argparse has no public view
    if not {"-a", "--ackers"} & taken:
        parser.add_argument("-a", "--ackers", dest="config", action=_OptionAlias,
                            default=argparse.SUPPRESS,
                            const=ACKERS_KEY, type=_count(0), metavar="N",
                            help=f"acker executors ({ACKERS_KEY}; 0: no acking), as "
                                 "streamparse's -a")
    if not {"-w", "--workers"} & taken:
        parser.add_argument("-w", "--workers", dest="config", action=_OptionAlias,
                            default=argparse.SUPPRESS,
                            const=WORKERS_KEY, type=_count(1), metavar="N",
                            help=f"worker processes ({WORKERS_KEY}), as streamparse's -w")
    if not {"-d", "--debug"} & taken:
        parser.add_argument("-d", "--debug", dest="config", action=_OptionAlias,
                            default=argparse.SUPPRESS, nargs=0,
                            const=f"{DEBUG_KEY}=true",
                            help=f"{DEBUG_KEY}: true: log every tuple the executors emit "
                                 "and receive, as streamparse's -d")
