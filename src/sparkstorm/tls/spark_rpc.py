"""Spark's own network, authenticated and encrypted: ``spark.authenticate`` with its secret.

Spark moves a window's blobs (the tuples) between its executors in shuffle blocks, and its
driver, master, workers and executors call each other over its RPC. With
``spark.authenticate`` every such connection proves a shared secret (an application
without it is refused by the master), and with ``spark.network.crypto.enabled`` it is
encrypted (AES-GCM, keys agreed per connection from that secret).

Where the secret comes from depends on the cluster manager:

- **standalone** (``spark://``): one secret shared by the master, the workers and every
  application. sparkstorm keeps it in the file ``spark-secret`` (0600) of the cluster's TLS
  folder (``storm.tls.dir``), made by ``sparkstorm tls init`` with the rest of the material
  and by Nimbus on its first start when missing, like the cluster token; or in the file
  ``storm.spark.secret.file`` names. The master and the workers get the same secret from a
  ``spark-defaults.conf`` (0600) holding ``spark.authenticate.secret``.
- **YARN, Kubernetes**: Spark makes a secret per application itself when
  ``spark.authenticate`` is true; no file is needed.
- **local** (``local[*]``): one JVM, no network: nothing is set.

The secret never goes on a command line: the driver's JVM is launched without it, and the
SparkContext gets it over PySpark's own gateway (:func:`sparkstorm.engine.spark.session.get_spark`).

Example:
    >>> rpc_security_defaults("spark://m:7077")
    {'spark.authenticate': True, 'spark.network.crypto.enabled': True}
    >>> rpc_security_defaults("local[2]")
    {}
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from sparkstorm.config import conf_optional_str
from sparkstorm.errors import ConfigError
from sparkstorm.tls.material import SPARK_SECRET_FILE, new_spark_secret, tls_dir

logger = logging.getLogger(__name__)

SECRET_FILE_KEY = "storm.spark.secret.file"
AUTHENTICATE, SECRET, CRYPTO = ("spark.authenticate", "spark.authenticate.secret",
                                "spark.network.crypto.enabled")


def is_local_master(master: str) -> bool:
    """A master whose driver and executors share one JVM (``local``, ``local[N]``...).

    ``local-cluster[...]`` launches executor JVMs: it has Spark's network, as standalone.

    Example:
        >>> [is_local_master(m) for m in ("local", "local[2]", "local-cluster[2,1,1024]")]
        [True, True, False]
    """
    return master == "local" or master.startswith("local[")


def needs_shared_secret(master: str) -> bool:
    """Whether Spark wants ``spark.authenticate.secret`` given (standalone and local-cluster).

    Example:
        >>> [needs_shared_secret(m) for m in ("spark://a:7077", "yarn", "k8s://h:443")]
        [True, False, False]
    """
    return master.startswith(("spark://", "local-cluster"))


def rpc_security_defaults(master: str) -> dict[str, object]:
    """The Spark settings that authenticate and encrypt Spark's network under ``master``.

    Nothing for a local master (no network). For any other master, ``spark.authenticate``
    and ``spark.network.crypto.enabled``: on YARN and Kubernetes Spark makes the secret; a
    standalone master needs the shared one (:func:`read_spark_secret`).
    """
    if is_local_master(master):
        return {}
    return {AUTHENTICATE: True, CRYPTO: True}


def cluster_worker_settings(conf: Mapping[str, object], host_conf: Mapping[str, object]
                            ) -> dict[str, object]:
    """What a worker of a TLS cluster adds to its topology's conf for Spark's network.

    :func:`rpc_security_defaults` for the topology's master, unless the topology sets the
    key itself; under a standalone master also the secret file of this host's conf
    (``host_conf``: the supervisor's; a submitter's path names another machine).

    Example:
        >>> cluster_worker_settings({"spark.master": "spark://a:7077"},
        ...                         {"storm.spark.secret.file": "/etc/s"})[SECRET_FILE_KEY]
        '/etc/s'
        >>> cluster_worker_settings({"spark.master": "yarn", "spark.authenticate": False}, {})
        {'spark.network.crypto.enabled': True}
    """
    from sparkstorm.config import spark_settings

    given = spark_settings(conf)
    master = given["spark.master"]
    found = {key: value for key, value in rpc_security_defaults(master).items()
             if key not in given}
    if needs_shared_secret(master) and SECRET not in given:
        found[SECRET_FILE_KEY] = str(spark_secret_file(host_conf))
    return found


def spark_secret_file(conf: Mapping[str, object]) -> Path:
    """``storm.spark.secret.file``, else ``<storm.tls.dir>/spark-secret``."""
    configured = conf_optional_str(conf, SECRET_FILE_KEY)
    return Path(configured) if configured else tls_dir(conf) / SPARK_SECRET_FILE


def read_spark_secret(conf: Mapping[str, object]) -> str:
    """The standalone cluster's shared Spark secret (:func:`spark_secret_file`).

    Raises:
        ConfigError: ``SPARK_SECRET_MISSING`` when the file is missing or empty.
    """
    path = spark_secret_file(conf)
    try:
        secret = path.read_text().strip()
    except OSError:
        secret = ""
    if not secret:
        msg = (f"spark.authenticate is on for a standalone Spark master but its shared "
               f"secret file {path} is missing or empty; make it with 'sparkstorm tls "
               f"init' (or 'sparkstorm tls spark-secret --dir {path.parent}'), give the "
               "master and workers the same secret (spark.authenticate.secret in their "
               "spark-defaults.conf, mode 0600), point storm.spark.secret.file at it, or "
               "set spark.authenticate: false on a trusted network")
        raise ConfigError(msg, code="SPARK_SECRET_MISSING")
    return secret


def write_spark_secret(path: Path) -> bool:
    """Make a new random secret in ``path`` (0600) unless a file is there; whether it did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL with the final mode: the secret is never readable by others
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as out:
        out.write(new_spark_secret())
    return True


def load_or_create_spark_secret(conf: Mapping[str, object]) -> Path:
    """The secret file of ``conf``; made when missing (Nimbus's first start, as the token).

    An explicitly named file (``storm.spark.secret.file``) is never made: it is the
    operator's, shared with the Spark master.
    """
    path = spark_secret_file(conf)
    if conf_optional_str(conf, SECRET_FILE_KEY) is None and write_spark_secret(path):
        logger.warning("made the standalone Spark secret into %s: give the Spark master and "
                       "workers the same spark.authenticate.secret", path)
    return path


__all__ = ["AUTHENTICATE", "CRYPTO", "SECRET", "SECRET_FILE_KEY", "SPARK_SECRET_FILE",
           "cluster_worker_settings", "is_local_master", "load_or_create_spark_secret",
           "needs_shared_secret", "read_spark_secret", "rpc_security_defaults",
           "spark_secret_file", "write_spark_secret"]
