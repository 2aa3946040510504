"""``sparkstorm tls init``: the cluster's TLS material, made once by the operator.

``sparkstorm tls init --dir DIR --host nimbus.example.com --host 10.0.0.12 ...`` makes a
cluster CA and one certificate for every given host (plus ``localhost``/``127.0.0.1``) into
``DIR`` (:mod:`sparkstorm.tls.material`); every host of the cluster then sets
``storm.tls.dir: DIR`` on a copy of it. Without ``--dir`` it is ``storm.tls.dir`` (default
``<storm.local.dir>/tls``), which a single-machine Nimbus makes by itself when missing.

``sparkstorm tls spark-secret [--dir DIR]`` makes only the standalone Spark secret
(``spark-secret``, :mod:`sparkstorm.tls.spark_rpc`) in a folder made before it existed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sparkstorm.config import load_config, parse_cli_overrides


def register(commands: Any) -> None:
    """Add the ``tls`` subcommand (``tls init``)."""
    parser = commands.add_parser("tls", help="the cluster's TLS material (tls init)")
    actions = parser.add_subparsers(dest="tls_action", required=True)
    init = actions.add_parser("init", help="make a cluster CA and the hosts' certificate")
    init.add_argument("--dir", type=Path, default=None,
                      help="where to make it (default: storm.tls.dir, else "
                           "<storm.local.dir>/tls); must not hold material yet")
    init.add_argument("--host", action="append", default=[], metavar="NAME_OR_IP",
                      help="a host name or address the certificate is valid for (repeat "
                           "for every host of the cluster; localhost and 127.0.0.1 always)")
    init.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                      help="configuration override")
    init.set_defaults(handler=tls_init_command)
    secret = actions.add_parser("spark-secret",
                                help="make the standalone Spark secret (spark-secret) only")
    secret.add_argument("--dir", type=Path, default=None,
                        help="the folder to make DIR/spark-secret in (default: the file "
                             "storm.spark.secret.file names, else storm.tls.dir's "
                             "spark-secret); an existing secret is kept")
    secret.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                        help="configuration override")
    secret.set_defaults(handler=spark_secret_command)


def tls_init_command(args: argparse.Namespace) -> int:
    """Make the material and say where it is and what to do with it."""
    from sparkstorm.tls.material import ALWAYS_NAMES, CA_KEY_FILE, make_material, tls_dir

    conf = load_config(cli=parse_cli_overrides(args.config))
    folder = (args.dir or tls_dir(conf)).resolve()
    make_material(folder, args.host)
    hosts = ", ".join(dict.fromkeys([*ALWAYS_NAMES, *args.host]))
    print(f"made the cluster CA and a certificate for {hosts} in {folder}\n"
          f"copy that folder to every host and set storm.tls.dir: {folder} there; "
          f"{CA_KEY_FILE} is needed only to make new material: keep it off the hosts")
    return 0


def spark_secret_command(args: argparse.Namespace) -> int:
    """Make the standalone Spark secret unless it is there; say how the master gets it."""
    from sparkstorm.tls.spark_rpc import SPARK_SECRET_FILE, spark_secret_file, write_spark_secret

    conf = load_config(cli=parse_cli_overrides(args.config))
    path = (args.dir / SPARK_SECRET_FILE if args.dir else spark_secret_file(conf)).resolve()
    made = write_spark_secret(path)
    print(f"{'made' if made else 'kept'} the standalone Spark secret {path}\n"
          "give the Spark master and workers the same secret: spark.authenticate true, "
          "spark.authenticate.secret <its content> and spark.network.crypto.enabled true "
          "in their spark-defaults.conf (mode 0600)")
    return 0
