"""The cluster's TLS material (sparkstorm tls init) and the contexts built on it."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
from cryptography import x509

from sparkstorm.cli.main import main
from sparkstorm.errors import ConfigError
from sparkstorm.tls.contexts import client_context, server_context
from sparkstorm.tls.material import (
    TlsFiles,
    load_or_create_material,
    make_material,
    require_tls_files,
    tls_files,
)


def _files(folder: Path) -> TlsFiles:
    return tls_files({"storm.tls.dir": str(folder)})


def test_tls_init_makes_a_ca_and_a_node_certificate_for_the_hosts(tmp_path: Path) -> None:
    folder = tmp_path / "tls"
    assert main(["tls", "init", "--dir", str(folder), "--host", "10.82.0.2",
                 "--host", "node-b"]) == 0
    files = _files(folder)
    assert not files.missing()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for key in (files.key, folder / "ca-key.pem"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == {"localhost", "node-b"}
    assert set(names.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address(a) for a in ("127.0.0.1", "::1", "10.82.0.2")}
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    cert.verify_directly_issued_by(ca)


def test_tls_init_refuses_a_folder_that_has_material(tmp_path: Path) -> None:
    make_material(tmp_path / "tls", [])
    before = (tmp_path / "tls" / "ca.pem").read_bytes()
    with pytest.raises(ConfigError) as caught:
        make_material(tmp_path / "tls", [])
    assert caught.value.code == "TLS_MATERIAL_EXISTS"
    assert (tmp_path / "tls" / "ca.pem").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["tls"], "no staging folder left"


def test_nimbus_makes_missing_material_once_and_explicit_files_never(tmp_path: Path) -> None:
    conf = {"storm.local.dir": str(tmp_path / "local")}
    made = load_or_create_material(conf)
    assert made.ca == tmp_path / "local" / "tls" / "ca.pem" and not made.missing()
    ca = made.ca.read_bytes()
    assert load_or_create_material(conf) == made and made.ca.read_bytes() == ca
    explicit = {**conf, "storm.tls.cert.file": str(tmp_path / "mine.pem")}
    with pytest.raises(ConfigError) as caught:
        load_or_create_material(explicit)
    assert caught.value.code == "TLS_MATERIAL_MISSING"
    with pytest.raises(ConfigError) as missing:
        require_tls_files({"storm.tls.dir": str(tmp_path / "none")})
    assert missing.value.code == "TLS_MATERIAL_MISSING"


def _serve_once(context: ssl.SSLContext) -> tuple[int, threading.Thread, list[str]]:
    """A TLS echo of one connection on loopback; the outcomes go into the list."""
    listener = socket.create_server(("127.0.0.1", 0))
    outcomes: list[str] = []

    def run() -> None:
        with listener:
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(tls.recv(100))
                    outcomes.append("served")
            except (ssl.SSLError, OSError) as exc:
                outcomes.append(type(exc).__name__)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread, outcomes


def _call(port: int, context: ssl.SSLContext) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(b"ping")
        return tls.recv(100)


def test_mutual_tls_admits_the_cluster_and_refuses_strangers(tmp_path: Path) -> None:
    make_material(tmp_path / "ours", [])
    make_material(tmp_path / "theirs", [])
    ours, theirs = _files(tmp_path / "ours"), _files(tmp_path / "theirs")

    port, thread, outcomes = _serve_once(server_context(ours))
    assert _call(port, client_context(ours)) == b"ping"
    thread.join(10)
    assert outcomes == ["served"]

    # another cluster's certificate (a stranger with a valid-looking one): refused
    port, thread, outcomes = _serve_once(server_context(ours))
    stranger = client_context(theirs)
    stranger.load_verify_locations(ours.ca)  # it even trusts our server
    with pytest.raises((ssl.SSLError, OSError)):
        _call(port, stranger)
    thread.join(10)
    assert outcomes and outcomes != ["served"]

    # no client certificate at all (a captured token is all it has): refused
    port, thread, outcomes = _serve_once(server_context(ours))
    anonymous = ssl.create_default_context(cafile=ours.ca)
    with pytest.raises((ssl.SSLError, OSError)):
        _call(port, anonymous)
    thread.join(10)
    assert outcomes and outcomes != ["served"]
