"""``sparkstorm visualize``: streamparse's ``sparse visualize``, a topology's DAG.

``visualize [FILE] [-n NAME] [-e ENV] [-f FORMAT] [-o OUTPUT] [--flip]`` reads the topology
without a cluster, as ``run`` does (a Python file, a Flux file, or the streamparse project's
topology ``-n NAME`` from its root), and draws it (:mod:`sparkstorm.cli.topology_graph`):

- no ``-f`` nor ``-o``: as text in the terminal (its layers, then one line per edge);
- ``-f dot``: Graphviz DOT, on stdout or into ``-o``;
- ``-f png`` (``svg``, ``pdf``, ...): an image rendered by Graphviz's ``dot`` program
  (Debian's ``graphviz`` package), into ``-o``, by default ``NAME.FORMAT`` as streamparse
  writes it; without ``dot`` it says to install it or to use ``-f dot``.

``-o`` without ``-f`` takes the format from its extension (``graph.svg``), else png; as in
streamparse the format's extension is added to an ``-o`` without it. ``--flip`` draws top
to bottom instead of left to right (and lists the text form from the last layer back).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from sparkstorm.cli.errors import CliError
from sparkstorm.cli.topology_graph import render_dot, render_text

TEXT_FORMATS = ("text", "txt")
DOT_FORMATS = ("dot", "gv")
IMAGE_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg", "gif", "ps")
RENDER_TIMEOUT_SECS = 60


def register(commands: Any) -> None:
    """Add the ``visualize`` subcommand."""
    parser = commands.add_parser("visualize", help="draw a topology's DAG: text, Graphviz "
                                 "DOT or an image (streamparse's 'sparse visualize')")
    parser.add_argument("file", nargs="?", help="a Python or Flux topology file (default: "
                                                "the streamparse project of this folder)")
    parser.add_argument("--topology", help="the Topology class, if the file has several")
    parser.add_argument("-n", "--name", help="the project's topology (topologies/NAME.py), "
                                             "or the name shown")
    parser.add_argument("-e", "--environment",
                        help="the config.json environment of a streamparse project")
    parser.add_argument("-f", "--format", type=str.lower,
                        help=f"text, dot or an image format {'/'.join(IMAGE_FORMATS)} "
                             "(default: text, or -o's extension)")
    parser.add_argument("-o", "--output", "--output_file", dest="output", metavar="FILE",
                        help="write here (default: the terminal; NAME.FORMAT for images)")
    parser.add_argument("--flip", action="store_true",
                        help="top to bottom instead of left to right")
    parser.add_argument("--filter", metavar="FILE",
                        help="Flux: a .properties file whose values replace ${key}")
    parser.add_argument("--env-filter", action="store_true",
                        help="Flux: replace ${ENV-NAME} with the environment variable NAME")
    parser.set_defaults(handler=visualize_command)


def output_format(fmt: str | None, output: str | None) -> str:
    """The format asked for: ``-f``, else ``-o``'s extension, else png with ``-o`` and text.

    Raises:
        CliError: ``VISUALIZE_BAD_FORMAT`` for a format we cannot write.
    """
    if fmt is None and output is not None:
        suffix = Path(output).suffix.lstrip(".").lower()
        fmt = suffix if suffix in TEXT_FORMATS + DOT_FORMATS + IMAGE_FORMATS else "png"
    fmt = fmt or "text"
    if fmt not in TEXT_FORMATS + DOT_FORMATS + IMAGE_FORMATS:
        known = ", ".join(TEXT_FORMATS + DOT_FORMATS + IMAGE_FORMATS)
        msg = f"-f {fmt}: not a format visualize writes; use one of {known}"
        raise CliError(msg, code="VISUALIZE_BAD_FORMAT")
    return fmt


def output_path(output: str | None, fmt: str, name: str) -> Path | None:
    """Where to write (None: stdout); streamparse's extension rule (see the module docstring)."""
    if output is None:
        return Path(f"{name}.{fmt}") if fmt in IMAGE_FORMATS else None
    path = Path(output)
    return path if path.suffix.lstrip(".").lower() == fmt else Path(f"{output}.{fmt}")


def render_image(dot: str, fmt: str) -> bytes:
    """Render DOT text with Graphviz's ``dot -T<fmt>``.

    Raises:
        CliError: ``GRAPHVIZ_NOT_INSTALLED`` when ``dot`` is not on ``PATH``,
            ``GRAPHVIZ_FAILED`` when it fails (with its error).
    """
    program = shutil.which("dot")
    if program is None:
        msg = (f"-f {fmt} needs Graphviz's 'dot' program, which is not on PATH; install it "
               "(apt-get install graphviz), or write the graph as DOT with -f dot and render "
               "it elsewhere")
        raise CliError(msg, code="GRAPHVIZ_NOT_INSTALLED")
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=dot.encode(), capture_output=True,
                              timeout=RENDER_TIMEOUT_SECS, check=False)
    except subprocess.TimeoutExpired as exc:
        msg = f"{program} -T{fmt} did not finish within {RENDER_TIMEOUT_SECS} s"
        raise CliError(msg, code="GRAPHVIZ_FAILED") from exc
    if done.returncode != 0 or not done.stdout:
        error = done.stderr.decode(errors="replace").strip()
        msg = (f"{program} -T{fmt} failed (exit {done.returncode}): {error or 'no output'}; "
               "check that this Graphviz build supports the format, or use -f dot or svg")
        raise CliError(msg, code="GRAPHVIZ_FAILED")
    return done.stdout


def visualize_command(args: argparse.Namespace) -> int:
    """Draw the topology in the format asked for."""
    from sparkstorm.cli.target import resolve_target

    fmt = output_format(args.format, args.output)
    target_args = argparse.Namespace(file=args.file, topology=args.topology, name=args.name,
                                     environment=args.environment, filter=args.filter,
                                     env_filter=args.env_filter, config=[])
    target = resolve_target(target_args, submitting=False)
    spec = target.spec.to_dict()
    if fmt in TEXT_FORMATS:
        data = (render_text(spec, target.name, flip=args.flip) + "\n").encode()
    elif fmt in DOT_FORMATS:
        data = render_dot(spec, target.name, flip=args.flip).encode()
    else:
        data = render_image(render_dot(spec, target.name, flip=args.flip), fmt)
    path = output_path(args.output, fmt, target.name)
    if path is None:
        sys.stdout.write(data.decode())
        return 0
    path.write_bytes(data)
    print(f"wrote {path} ({fmt}, {len(data):,} bytes)", file=sys.stderr)
    return 0
