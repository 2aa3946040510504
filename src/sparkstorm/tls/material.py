"""The cluster's TLS material: a CA of its own and each host's certificate.

``sparkstorm tls init --dir DIR --host NAME ...`` makes, in ``DIR``:

- ``ca.pem``: the cluster CA's certificate, the only authority a cluster peer trusts;
- ``ca-key.pem``: the CA's key (0600), needed only to issue more certificates: keep it off the
  hosts once every certificate is made;
- ``node.pem`` / ``node-key.pem`` (0600): the certificate every daemon of the cluster serves
  and presents as client certificate, for the given hosts plus ``localhost``/``127.0.0.1``.
- ``spark-secret`` (0600): the shared secret of Spark's own network on a standalone Spark
  master (:mod:`sparkstorm.tls.spark_rpc`).

Every host of a cluster points ``storm.tls.dir`` at a copy of that folder (or gives
``storm.tls.ca.file``/``storm.tls.cert.file``/``storm.tls.key.file`` of its own, signed by
the same CA). On one machine nothing has to be done: Nimbus makes the folder
(``<storm.local.dir>/tls``) on its first start when it is missing, as it does the token.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import logging
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass
from pathlib import Path

from sparkstorm.config import conf_bool, conf_optional_str, conf_str, local_dir
from sparkstorm.errors import ConfigError

logger = logging.getLogger(__name__)

CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE = "ca.pem", "ca-key.pem", "node.pem", "node-key.pem"
SPARK_SECRET_FILE = "spark-secret"
"""A standalone Spark cluster's shared secret (:mod:`sparkstorm.tls.spark_rpc`)."""
VALID_DAYS = 3650
"""Ten years: a cluster's certificates are renewed by making new material, not by expiry."""
MATERIAL_WAIT_SECS = 30.0
"""How long a daemon started beside Nimbus waits for the material Nimbus makes."""
ALWAYS_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class TlsFiles:
    """Where one host's TLS material is."""

    ca: Path
    cert: Path
    key: Path

    def missing(self) -> list[Path]:
        """The files that do not exist."""
        return [path for path in (self.ca, self.cert, self.key) if not path.is_file()]


def tls_enabled(conf: Mapping[str, object]) -> bool:
    """``storm.tls.enabled``."""
    return conf_bool(conf, "storm.tls.enabled")


def tls_dir(conf: Mapping[str, object]) -> Path:
    """``storm.tls.dir``, else ``<storm.local.dir>/tls``."""
    configured = conf_optional_str(conf, "storm.tls.dir")
    return Path(configured) if configured else local_dir(conf) / "tls"


def tls_files(conf: Mapping[str, object]) -> TlsFiles:
    """The CA, certificate and key this host uses (explicit files win over the folder)."""
    folder = tls_dir(conf)

    def pick(key: str, name: str) -> Path:
        return Path(conf_optional_str(conf, key) or folder / name)

    return TlsFiles(pick("storm.tls.ca.file", CA_FILE), pick("storm.tls.cert.file", CERT_FILE),
                    pick("storm.tls.key.file", KEY_FILE))


def _explicit(conf: Mapping[str, object]) -> bool:
    return any(conf_optional_str(conf, key) for key in
               ("storm.tls.ca.file", "storm.tls.cert.file", "storm.tls.key.file"))


def _missing_error(conf: Mapping[str, object], missing: list[Path]) -> ConfigError:
    names = ", ".join(str(path) for path in missing)
    msg = (f"storm.tls.enabled is true but the cluster's TLS material is missing ({names}); "
           f"make it once with 'sparkstorm tls init --dir {tls_dir(conf)} --host <each "
           "host>' and give every host a copy (storm.tls.dir), or start Nimbus with this "
           "storm.local.dir first on a single machine, or set storm.tls.enabled: false on a "
           "trusted network")
    return ConfigError(msg, code="TLS_MATERIAL_MISSING")


def require_tls_files(conf: Mapping[str, object], wait_secs: float = 0.0) -> TlsFiles:
    """The material of ``conf``, waiting up to ``wait_secs`` for Nimbus to make it.

    Raises:
        ConfigError: ``TLS_MATERIAL_MISSING``.
    """
    files = tls_files(conf)
    deadline = time.monotonic() + wait_secs
    while missing := files.missing():
        if time.monotonic() >= deadline:
            raise _missing_error(conf, missing)
        time.sleep(0.2)
    return files


def this_host_names(conf: Mapping[str, object]) -> list[str]:
    """The names a certificate made on this machine for ``conf`` covers."""
    names = [socket.gethostname()]
    for key in ("nimbus.host", "ui.host", "storm.local.hostname"):
        value = conf_optional_str(conf, key) if key == "storm.local.hostname" else conf_str(
            conf, key)
        if value and value not in ("0.0.0.0", "::"):
            names.append(value)
    return names


def load_or_create_material(conf: Mapping[str, object]) -> TlsFiles:
    """This host's material; made into ``storm.tls.dir`` when it is all missing.

    Called by Nimbus and ``sparkstorm cluster`` at start (like the token): a single-machine
    cluster just works. Explicitly named files are never made: a missing one is an error.

    Raises:
        ConfigError: ``TLS_MATERIAL_MISSING`` (explicit files, or a folder half made).
    """
    files = tls_files(conf)
    missing = files.missing()
    if not missing:
        return files
    folder = tls_dir(conf)
    if _explicit(conf) or len(missing) < len(astuple(files)):
        raise _missing_error(conf, missing)
    make_material(folder, this_host_names(conf))
    logger.warning("storm.tls.dir had no TLS material: made a cluster CA and a certificate "
                   "for this machine into %s", folder)
    return files


def make_material(folder: Path, hosts: Iterable[str]) -> None:
    """Make a CA and a node certificate for ``hosts`` into ``folder`` (made whole or not at all).

    The files are written into a sibling temporary folder renamed into place, so a process
    reading ``folder`` never sees half of it, and two processes making it at once agree on
    one (the second rename fails; its material is dropped).

    Raises:
        ConfigError: ``TLS_MATERIAL_EXISTS`` when ``folder`` already has material.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tls-", dir=folder.parent))
    try:
        _write_material(staging, list(hosts))
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        try:
            staging.rename(folder)
        except OSError as exc:
            msg = (f"{folder} already holds TLS material (or is not an empty folder); "
                   "remove it to make new material, or use the one there")
            raise ConfigError(msg, code="TLS_MATERIAL_EXISTS") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(staging)


def _write_material(folder: Path, hosts: list[str]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    until = now + datetime.timedelta(days=VALID_DAYS)
    since = now - datetime.timedelta(minutes=5)  # hosts whose clocks lag a little
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                            f"sparkstorm cluster CA {os.urandom(4).hex()}")])
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(since).not_valid_after(until)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(
                   digital_signature=False, content_commitment=False, key_encipherment=False,
                   data_encipherment=False, key_agreement=False, key_cert_sign=True,
                   crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                              critical=False)
               .sign(ca_key, hashes.SHA256()))
    node_key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys([*ALWAYS_NAMES, *hosts]):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    node_cert = (x509.CertificateBuilder()
                 .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                             "sparkstorm node")]))
                 .issuer_name(ca_name).public_key(node_key.public_key())
                 .serial_number(x509.random_serial_number())
                 .not_valid_before(since).not_valid_after(until)
                 .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                critical=True)
                 .add_extension(x509.SubjectAlternativeName(names), critical=False)
                 .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                       ExtendedKeyUsageOID.CLIENT_AUTH]),
                                critical=False)
                 .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                     ca_key.public_key()), critical=False)
                 .sign(ca_key, hashes.SHA256()))

    def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    folder.chmod(0o700)
    _write(folder / CA_FILE, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(folder / CA_KEY_FILE, key_pem(ca_key), 0o600)
    _write(folder / CERT_FILE, node_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(folder / KEY_FILE, key_pem(node_key), 0o600)
    _write(folder / SPARK_SECRET_FILE, new_spark_secret(), 0o600)  # a standalone Spark's


def new_spark_secret() -> bytes:
    """A new random standalone Spark secret: 32 bytes, hex, and a newline."""
    return (secrets.token_hex(32) + "\n").encode()


def _write(path: Path, data: bytes, mode: int) -> None:
    # O_EXCL with the final mode: a key is never readable by others, not even for a moment
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


FILE_KEYS = {"ca": "storm.tls.ca.file", "cert": "storm.tls.cert.file", "key": "storm.tls.key.file"}


def files_env(files: TlsFiles) -> dict[str, str]:
    """The environment that names ``files`` to a child (a worker): the keys' own variables."""
    from sparkstorm.config import KEYS

    return {KEYS[key].env_var: str(getattr(files, field)) for field, key in FILE_KEYS.items()}


def files_from_env(environ: Mapping[str, str]) -> TlsFiles | None:
    """The files :func:`files_env` named, or None when it named none."""
    from sparkstorm.config import KEYS

    paths = {field: environ.get(KEYS[key].env_var) for field, key in FILE_KEYS.items()}
    if not all(paths.values()):
        return None
    return TlsFiles(Path(str(paths["ca"])), Path(str(paths["cert"])), Path(str(paths["key"])))
