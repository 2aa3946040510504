"""``sparkstorm pack-env``: a packed virtualenv with sparkstorm, for ``spark.archives``.

Spark documents shipping a PySpark application's Python environment as an archive that
every executor unpacks (``--archives env.tar.gz#env`` with ``spark.pyspark.python=
./env/bin/python``), packed by ``venv-pack`` or ``conda-pack``. ``venv-pack`` refuses an
environment where a package is installed editable (a development checkout, ``pip install
-e``), so :func:`pack_env` builds a fresh one instead:

1. ``python -m venv`` in a temporary folder;
2. sparkstorm installed **not** editable: from the same source folder as the running one
   when that is a local checkout (copied first, so the build leaves nothing in it), else
   the same version from the package index;
3. its dependencies but PySpark and py4j (Spark puts its own ``pyspark.zip`` and py4j on
   every Python worker's path, and PySpark is 300+ MB), then the user's requirements files;
4. packed with ``tar`` (gzip): the whole folder, symbolic links kept.

Like ``venv-pack``'s archives, the environment's ``bin/python`` is a link to the interpreter
it was made from: every Spark host needs that interpreter at the same path (a cluster whose
hosts run the same OS image has it). Otherwise pack a conda environment (``conda-pack``,
which carries the interpreter) and pass it with ``--archive``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from sparkstorm.spark_app.errors import SparkAppError

logger = logging.getLogger(__name__)

LEFT_OUT = ("pyspark", "py4j")
"""Dependencies the archive leaves out: Spark gives every Python worker its own."""
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE", "setup.py", "setup.cfg")
PIP_TIMEOUT_SECS = 900.0


def sparkstorm_source() -> str:
    """What pip installs sparkstorm from.

    The running one's local source folder (a checkout installed with ``pip install -e``
    or from a folder), else ``sparkstorm==<version>`` from the package index.
    """
    import sparkstorm

    package = Path(sparkstorm.__file__).resolve().parent
    if package.parent.name == "src" and (package.parents[1] / "pyproject.toml").is_file():
        return str(package.parents[1])  # running from a checkout (pip install -e)
    dist = metadata.distribution("sparkstorm")
    direct = dist.read_text("direct_url.json")
    if direct:
        url = urlparse(json.loads(direct).get("url", ""))
        if url.scheme == "file" and Path(unquote(url.path)).is_dir():
            return unquote(url.path)
    return f"sparkstorm=={dist.version}"


def dependencies() -> list[str]:
    """Sparkstorm's own requirements (no extras), PySpark and py4j left out."""
    wanted = []
    for requirement in metadata.requires("sparkstorm") or []:
        if "extra ==" in requirement:
            continue
        name = requirement.split(";")[0].strip()
        bare = name.replace(">", " ").replace("<", " ").replace("=", " ").replace("!", " ")
        if bare.split()[0].lower() not in LEFT_OUT:
            wanted.append(name)
    return wanted


def _copy_source(folder: str, into: Path) -> Path:
    """The files pip needs to build sparkstorm, copied (its build writes next to them)."""
    target = into / "sparkstorm-source"
    target.mkdir()
    for name in SOURCE_FILES:
        if (Path(folder) / name).is_file():
            shutil.copy2(Path(folder) / name, target / name)
    shutil.copytree(Path(folder) / "src", target / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return target


def _run(command: Sequence[str], what: str) -> None:
    """Run a build step; its output goes to the log when it fails.

    Raises:
        SparkAppError: ``PACK_ENV_FAILED`` naming the step, with the command's output.
    """
    logger.info("pack-env: %s", " ".join(command))
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, check=False,
                              timeout=PIP_TIMEOUT_SECS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        msg = f"packing the environment failed while {what}: {exc}"
        raise SparkAppError(msg, code="PACK_ENV_FAILED") from exc
    if done.returncode != 0:
        msg = (f"packing the environment failed while {what} (exit code {done.returncode}):"
               f"\n{(done.stdout + done.stderr)[-4000:]}\nfix what pip says (a requirement "
               "that does not exist, no network to the package index) and run again")
        raise SparkAppError(msg, code="PACK_ENV_FAILED")


@dataclass(frozen=True)
class Packed:
    """A packed environment.

    Its archive, and the interpreter its ``bin/python`` links to (every Spark host needs it
    at that path).
    """

    path: Path
    python: str


def pack_env(output: Path, requirements: Sequence[Path] = (), python: str | None = None,
             source: str | None = None) -> Packed:
    """Build a virtualenv with sparkstorm and ``requirements`` and pack it into ``output``.

    Args:
        output: the ``.tar.gz`` to write (replaced whole).
        requirements: pip requirements files of the topology's own dependencies.
        python: the interpreter the environment is made from (as on the Spark hosts;
            default: this one, whose Python version a client-mode driver has, and PySpark
            wants the same version in its workers).
        source: what pip installs sparkstorm from (default :func:`sparkstorm_source`).

    Returns:
        The archive (``output``) and the interpreter its ``bin/python`` links to.

    Raises:
        SparkAppError: ``PACK_ENV_FAILED`` when a step (venv, pip) fails.
    """
    with tempfile.TemporaryDirectory(prefix="sparkstorm-pack-env-") as tmp:
        folder = Path(tmp)
        env = folder / "env"
        _run([python or sys.executable, "-m", "venv", str(env)], "making the virtualenv")
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
               "--disable-pip-version-check"]
        chosen = source or sparkstorm_source()
        if Path(chosen).is_dir():
            chosen = str(_copy_source(chosen, folder))
        _run([*pip, "--no-deps", chosen], f"installing sparkstorm from {chosen}")
        _run([*pip, *dependencies()], "installing sparkstorm's dependencies")
        for file in requirements:
            _run([*pip, "-r", str(file)], f"installing the requirements of {file}")
        base = os.path.realpath(env / "bin" / "python")
        staging = output.with_name(output.name + ".tmp")
        with tarfile.open(staging, "w:gz") as archive:
            for entry in sorted(env.iterdir()):
                archive.add(entry, arcname=entry.name)
        os.replace(staging, output)
    return Packed(output, base)


def register(commands: Any) -> None:
    """Add the ``pack-env`` subcommand."""
    parser = commands.add_parser(
        "pack-env", help="pack a virtualenv with sparkstorm for spark-submit's --archives")
    parser.add_argument("-o", "--output", type=Path, default=Path("sparkstorm-env.tar.gz"),
                        help="the archive to write (default: sparkstorm-env.tar.gz)")
    parser.add_argument("-r", "--requirements", type=Path, action="append", default=[],
                        metavar="FILE", help="a pip requirements file of the topology's "
                                             "own dependencies (repeatable)")
    parser.add_argument("--python", default=None,
                        help="the interpreter to make it from, as the Spark hosts have it "
                             "(default: the one running sparkstorm: PySpark wants the "
                             "driver's Python version in its workers)")
    parser.set_defaults(handler=pack_env_command)


def pack_env_command(args: argparse.Namespace) -> int:
    """Build and pack the environment; print where it is and how to ship it."""
    packed = pack_env(args.output.resolve(), args.requirements, args.python)
    output = packed.path
    size = output.stat().st_size / 1e6
    print(f"{output} ({size:.0f} MB): ship it with sparkstorm spark-submit --archive {output} "
          f"(spark-submit --archives {output}#sparkstorm-env --conf "
          "spark.pyspark.python=./sparkstorm-env/bin/python); its bin/python links to "
          f"{packed.python}, which every Spark host needs at that path", file=sys.stderr)
    return 0


__all__ = ["LEFT_OUT", "Packed", "dependencies", "pack_env", "register", "sparkstorm_source"]
