"""``sparkstorm quickstart NAME``: lay out streamparse's quickstart project (word count)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sparkstorm.project.quickstart import quickstart


def register(commands: Any) -> None:
    """Add the ``quickstart`` subcommand."""
    parser = commands.add_parser(
        "quickstart", help="create a streamparse-style project (word count) in a new folder")
    parser.add_argument("project_name", help="the new project's folder")
    parser.set_defaults(handler=quickstart_command)


def quickstart_command(args: argparse.Namespace) -> int:
    """Write the project and say how to run it."""
    folder = Path(args.project_name)
    print(f"Creating your {folder.name} sparkstorm project...")
    for path in quickstart(folder):
        print(f"    create  {path}")
    print(f"Done.\n\nTry running your topology locally with:\n\n\tcd {folder}\n"
          "\tsparkstorm run\n")
    return 0
