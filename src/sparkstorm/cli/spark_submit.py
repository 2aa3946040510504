"""``sparkstorm spark-submit [FILE]``: deploy a topology with plain ``spark-submit``.

Builds the ``spark-submit`` command line that runs the topology as a Spark application
(:mod:`sparkstorm.spark_app`: the driver is the Spark driver, the application's Spark
executors host the executor processes; no Nimbus, supervisor or ZooKeeper), **prints it**,
then runs it (``--dry-run``: only prints it, and keeps the files it names). What it adds to
Spark's own options, the way Spark documents it for PySpark:

- the topology's code: a zip of the file's folder (or of the streamparse project) with
  ``--py-files``; the hosting tasks unpack it (``--code``);
- the Python environment: ``--archive ENV.tar.gz`` (made by ``sparkstorm pack-env``,
  ``venv-pack`` or ``conda-pack``) with ``--archives ENV.tar.gz#sparkstorm-env`` and
  ``spark.pyspark.python=./sparkstorm-env/bin/python``; in client mode the driver keeps
  this Python (``spark.pyspark.driver.python``). ``--pack-env`` builds one first;
- ``-c spark.KEY=VALUE`` as ``--conf spark.KEY=VALUE``; every other ``-c`` goes to the
  topology. Arguments after ``--`` go to ``spark-submit`` as they are (``--queue``,
  ``--num-executors``, ``--conf spark.kubernetes...``);
- Spark's own network authenticated and encrypted on any ``--master`` but a local one
  (``spark.authenticate``, ``spark.network.crypto.enabled``; with ``storm.tls.enabled``,
  unless ``-c spark.authenticate=...`` says otherwise): YARN and Kubernetes make the
  secret; a standalone master's shared secret is read by the driver from
  ``storm.spark.secret.file`` (passed to it as a path, never on the command line), or
  taken from spark-submit's own ``spark-defaults.conf`` (:mod:`sparkstorm.tls.spark_rpc`).

Stopping it (Ctrl-C, SIGTERM to this command or to ``spark-submit``) drains the topology.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkstorm.cli.target import Target, add_target_arguments, resolve_target
from sparkstorm.config import load_config, parse_cli_overrides, validate_conf
from sparkstorm.spark_app.errors import SparkAppError
from sparkstorm.tls.material import tls_enabled
from sparkstorm.tls.spark_rpc import (
    AUTHENTICATE,
    SECRET,
    SECRET_FILE_KEY,
    is_local_master,
    needs_shared_secret,
    rpc_security_defaults,
    spark_secret_file,
)
from sparkstorm.topology.validate import validate_topology, validate_topology_name

ENV_NAME = "sparkstorm-env"
"""The folder the environment archive unpacks to in each Spark executor's directory."""
EXECUTOR_PYTHON = f"./{ENV_NAME}/bin/python"
STAGING_PREFIX = "sparkstorm-submit-"
"""A dry run keeps the files it names in ``./sparkstorm-submit-NAME``."""


def register(commands: Any) -> None:
    """Add the ``spark-submit`` subcommand."""
    parser = commands.add_parser(
        "spark-submit", help="deploy a topology with spark-submit (prints the command)",
        description="Deploy a topology as a Spark application with plain spark-submit: "
                    "print the command line, then run it (--dry-run: only print it).")
    add_target_arguments(parser)
    parser.add_argument("--master", help="spark-submit's --master (default: spark-submit's)")
    parser.add_argument("--deploy-mode", choices=("client", "cluster"), default="client",
                        help="where the driver runs (default client; Python applications "
                             "run in cluster mode on YARN and Kubernetes only)")
    env = parser.add_mutually_exclusive_group()
    env.add_argument("--archive", metavar="ENV.tar.gz",
                     help="a packed Python environment with sparkstorm and the topology's "
                          "dependencies for the Spark executors (sparkstorm pack-env): a "
                          "file, or a URL the cluster reads (hdfs://, s3a://, https://)")
    env.add_argument("--pack-env", action="store_true",
                     help="build that environment first (sparkstorm pack-env)")
    parser.add_argument("-r", "--requirements", type=Path, action="append", default=[],
                        metavar="FILE", help="with --pack-env: the topology's own "
                                             "requirements (repeatable)")
    parser.add_argument("--spark-submit", dest="spark_submit", metavar="PATH",
                        help="the spark-submit to run (default: $SPARK_HOME/bin/spark-submit, "
                             "else the one on the PATH, else PySpark's)")
    parser.add_argument("--staging", type=Path, metavar="DIR",
                        help="where the code zip (and a packed environment) go (default: a "
                             "temporary folder, removed at the end; with --dry-run "
                             "./sparkstorm-submit-NAME, kept)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the command line and exit without running it")
    parser.set_defaults(handler=spark_submit_command, spark_args=[])
    parser.epilog = "Arguments after -- go to spark-submit as they are."


def split_passthrough(argv: list[str]) -> tuple[list[str], list[str]]:
    """``sparkstorm spark-submit ... -- SPARK ARGS``: the command's own and spark-submit's.

    Only for the ``spark-submit`` subcommand (argparse cannot take an optional FILE and
    free arguments after ``--`` at once); other commands' arguments stay whole.

    Example:
        >>> split_passthrough(["spark-submit", "t.py", "--", "--queue", "q"])
        (['spark-submit', 't.py'], ['--queue', 'q'])
        >>> split_passthrough(["run", "t.py", "--", "x"])
        (['run', 't.py', '--', 'x'], [])
    """
    command = next((a for a in argv if not a.startswith("-")), None)
    if command != "spark-submit" or "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


@dataclass
class Submission:
    """The spark-submit command line of one topology, and the files it names."""

    command: list[str]
    environment: dict[str, str]
    """Environment variables the command needs (``SPARK_HOME``)."""
    staging: Path
    code: Path
    archive: str | None = None
    notes: list[str] = field(default_factory=list)


def package_code(folder: Path, dest: Path, staging: Path) -> Path:
    """Zip ``folder`` as ``sparkstorm submit`` does, without the staging folders in it.

    A dry run's staging folder (``sparkstorm-submit-NAME``, made in the current directory,
    which is a streamparse project's root) would otherwise ship itself, a packed
    environment and an older zip included.
    """
    from sparkstorm.cli.submit import SKIPPED_DIRS, SKIPPED_SUFFIXES

    staging = staging.resolve()
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if (any(p.startswith(".") or p in SKIPPED_DIRS or p.startswith(STAGING_PREFIX)
                    for p in relative.parts)
                    or path.resolve().is_relative_to(staging)):
                continue
            if path.is_file() and path.suffix not in SKIPPED_SUFFIXES:
                archive.write(path, relative.as_posix())
    return dest


def find_spark_submit(explicit: str | None = None) -> str:
    """The ``spark-submit`` to run.

    Raises:
        SparkAppError: ``SPARK_SUBMIT_NOT_FOUND`` when there is none.
    """
    candidates = [explicit] if explicit else [
        os.path.join(os.environ["SPARK_HOME"], "bin", "spark-submit")
        if os.environ.get("SPARK_HOME") else None,
        shutil.which("spark-submit"),
        str(Path(sys.executable).parent / "spark-submit")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).is_file():
            return candidate
    msg = (f"no spark-submit found (tried {[c for c in candidates if c]}); install Spark "
           "(or PySpark, which ships one), set SPARK_HOME, or pass --spark-submit PATH")
    raise SparkAppError(msg, code="SPARK_SUBMIT_NOT_FOUND")


def spark_home_for(spark_submit: str) -> dict[str, str]:
    """``SPARK_HOME`` for PySpark's own ``spark-submit`` when it is not set.

    That script finds it through whatever ``python`` is on the PATH, which may have no
    PySpark.
    """
    if os.environ.get("SPARK_HOME"):
        return {}
    import importlib.util

    found = importlib.util.find_spec("pyspark")  # PySpark's files, without importing it
    if found is None or found.origin is None:
        return {}
    home = Path(found.origin).parent
    ours = {Path(sys.executable).parent.resolve(), (home / "bin").resolve()}
    if Path(spark_submit).parent.resolve() not in ours or not (home / "bin").is_dir():
        return {}  # another Spark's spark-submit finds its own home
    return {"SPARK_HOME": str(home)}


def app_file() -> Path:
    """The file spark-submit runs (``python -m sparkstorm.spark_app --path``)."""
    return Path(__file__).resolve().parents[1] / "spark_app" / "__main__.py"


def topology_argument(target: Target, file: str | None, cluster: bool) -> list[str]:
    """How the application names the topology: here (client) or in the code zip (cluster)."""
    if file is None or Path(file).is_dir():  # a streamparse project
        return [] if cluster else [str(target.code_root)]
    path = Path(file).resolve()
    if cluster:
        return [path.relative_to(target.code_root.resolve()).as_posix()]
    return [str(path)]


def build_submission(args: argparse.Namespace, target: Target, staging: Path,
                     archive: str | None) -> Submission:
    """The command line (see the module docs); writes the code zip into ``staging``."""
    overrides = parse_cli_overrides(args.config)
    spark_conf = {k: v for k, v in overrides.items() if k.startswith("spark.")}
    topology_conf = [c for c in args.config if not c.split("=", 1)[0].strip()
                     .startswith("spark.")]
    code = package_code(target.code_root, staging / f"{target.name}-code.zip", staging)
    cluster = args.deploy_mode == "cluster"
    command = [find_spark_submit(args.spark_submit)]
    environment = spark_home_for(command[0])
    if args.master:
        command += ["--master", args.master]
    command += ["--deploy-mode", args.deploy_mode, "--name", f"sparkstorm-{target.name}",
                "--py-files", str(code)]
    command += python_confs(spark_conf, archive, cluster, args.master)
    security, secret_file, notes = spark_security(spark_conf, args.master,
                                                  load_config(cli=overrides))
    command += security
    if archive is None and not str(args.master or "").startswith("local"):
        notes.append("no --archive: the Spark executors' Python must have sparkstorm and the "
                     "topology's dependencies installed (or pass --archive / --pack-env)")
    for key, value in spark_conf.items():
        command += ["--conf", f"{key}={_conf_text(value)}"]
    command += list(args.spark_args)
    command.append(str(app_file()))
    command += topology_argument(target, args.file, cluster)
    command += ["--code", code.name, "--name", target.name]
    for option, value in (("--topology", args.topology), ("-e", args.environment),
                          ("--filter", args.filter)):
        if value:
            command += [option, value]
    if args.env_filter:
        command.append("--env-filter")
    for item in [*topology_conf, *secret_file]:
        command += ["-c", item]
    return Submission(command, environment, staging, code, archive, notes)


def python_confs(spark_conf: dict[str, Any], archive: str | None, cluster: bool,
                 master: str | None) -> list[str]:
    """The ``--archives`` and Pythons of driver and executors (unless ``-c`` set them).

    The executors run the archive's Python; without an archive, a ``local`` master's run
    this Python, and a cluster's their own. A client-mode driver runs this Python (which
    has sparkstorm): PySpark's own default would be whatever ``python3`` is on the PATH.
    """
    confs = ["--archives", f"{archive}#{ENV_NAME}"] if archive is not None else []
    executors = (EXECUTOR_PYTHON if archive is not None else
                 sys.executable if str(master or "").startswith("local") else None)
    if executors is not None and "spark.pyspark.python" not in spark_conf:
        confs += ["--conf", f"spark.pyspark.python={executors}"]
    if not cluster and "spark.pyspark.driver.python" not in spark_conf:
        confs += ["--conf", f"spark.pyspark.driver.python={sys.executable}"]
    return confs


def spark_security(spark_conf: dict[str, Any], master: str | None, conf: dict[str, Any]
                   ) -> tuple[list[str], list[str], list[str]]:
    """Spark's network authenticated and encrypted: spark-submit's confs, the topology's, notes.

    Nothing for a local master (no network), without ``--master`` (spark-submit's own
    defaults decide), with ``storm.tls.enabled`` off, or when ``-c spark.authenticate`` is
    given. A standalone master's secret file is passed (as ``storm.spark.secret.file``)
    when it exists here; else the driver takes the secret from spark-submit's
    ``spark-defaults.conf``, or stops with ``SPARK_SECRET_MISSING``.

    Example:
        >>> spark_security({}, "yarn", {"storm.tls.enabled": True})[0]
        ['--conf', 'spark.authenticate=true', '--conf', 'spark.network.crypto.enabled=true']
        >>> spark_security({}, "local[2]", {"storm.tls.enabled": True})
        ([], [], [])
    """
    if (master is None or is_local_master(master) or not tls_enabled(conf)
            or AUTHENTICATE in spark_conf):
        return [], [], []
    confs = [arg for key, value in rpc_security_defaults(master).items()
             if key not in spark_conf for arg in ("--conf", f"{key}={_conf_text(value)}")]
    if not needs_shared_secret(master) or SECRET in spark_conf:
        return confs, [], []
    path = spark_secret_file(conf)
    if path.is_file():
        return confs, [f"{SECRET_FILE_KEY}={path}"], []
    return confs, [], [f"no standalone Spark secret at {path}: the driver takes "
                       "spark.authenticate.secret from spark-submit's spark-defaults.conf; "
                       f"else pass -c {SECRET_FILE_KEY}=FILE (the master's secret), or "
                       "-c spark.authenticate=false on a trusted network"]


def _conf_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _check(target: Target, overrides: dict[str, Any]) -> None:
    """The checks the application runs first, run here before anything is shipped."""
    validate_topology_name(target.name)
    validate_topology(target.spec, topology_name=target.name)
    validate_conf({**target.spec.config, **overrides},
                  where=f"topology {target.name!r} conf")


def spark_submit_command(args: argparse.Namespace) -> int:
    """Build and print the command line; run it unless ``--dry-run``; its exit code."""
    overrides = parse_cli_overrides(args.config)
    load_config(cli=overrides)  # bad values fail before the topology is imported
    target = resolve_target(args, submitting=True)
    for warning in target.warnings:
        print(f"sparkstorm spark-submit: warning: {warning}", file=sys.stderr)
    _check(target, overrides)
    remote = args.archive is not None and "://" in args.archive
    if args.archive is not None and not remote and not Path(args.archive).is_file():
        msg = (f"--archive {args.archive}: no such file; make one with sparkstorm pack-env "
               "(or venv-pack, conda-pack), or pass --pack-env")
        raise SparkAppError(msg, code="ENV_ARCHIVE_NOT_FOUND")
    kept = args.dry_run or args.staging is not None
    staging = (args.staging or Path(f"{STAGING_PREFIX}{target.name}")) if kept else Path(
        tempfile.mkdtemp(prefix="sparkstorm-spark-submit-"))
    staging = staging.resolve()
    staging.mkdir(parents=True, exist_ok=True)
    try:
        archive = (None if args.archive is None else args.archive if remote
                   else str(Path(args.archive).resolve()))
        if args.pack_env:
            from sparkstorm.cli.pack_env import pack_env

            print("sparkstorm spark-submit: packing the Python environment (sparkstorm pack-"
                  "env) ...", file=sys.stderr, flush=True)
            archive = str(pack_env(staging / f"{ENV_NAME}.tar.gz", args.requirements).path)
        submission = build_submission(args, target, staging, archive)
        for note in submission.notes:
            print(f"sparkstorm spark-submit: note: {note}", file=sys.stderr)
        print(command_line(submission), flush=True)
        if args.dry_run:
            print(f"sparkstorm spark-submit: the files it names are in {staging}",
                  file=sys.stderr)
            return 0
        return run_submission(submission.command, submission.environment)
    finally:
        if not kept:
            shutil.rmtree(staging, ignore_errors=True)


def command_line(submission: Submission) -> str:
    """The command line as a shell runs it, its environment variables first."""
    prefix = [f"{k}={shlex.quote(v)}" for k, v in submission.environment.items()]
    return " ".join([*prefix, shlex.join(submission.command)])


def run_submission(command: list[str], environment: dict[str, str] | None = None) -> int:
    """Run spark-submit; SIGINT and SIGTERM go to it (its driver drains); its exit code.

    spark-submit runs in a process group of its own, its JVM and the Python driver in it;
    both get the signal, and the driver drains whichever hears it first.
    """
    process = subprocess.Popen(command, start_new_session=True,
                               env={**os.environ, **(environment or {})})

    def forward(signum: int, _frame: object) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return process.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


__all__ = ["Submission", "app_file", "build_submission", "command_line", "find_spark_submit",
           "package_code", "python_confs", "register", "run_submission", "spark_home_for",
           "spark_submit_command", "split_passthrough", "topology_argument"]
