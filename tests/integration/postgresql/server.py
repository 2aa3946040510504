"""A real PostgreSQL server for the SQL connector's tests: Debian's, started by the tests.

``make services`` installs Debian's ``postgresql`` (``scripts/install-postgresql.sh``), whose
programs live in ``/usr/lib/postgresql/<version>/bin``. :class:`PostgresServer` runs ``initdb``
and ``postgres`` in a temporary folder of its own on a free loopback port, with the Unix socket
in that folder too, so it never meets the system's cluster. PostgreSQL refuses to run as root:
as root, the server runs as the ``postgres`` user that Debian's package creates, and the folder
is that user's. :meth:`PostgresServer.remove` stops the server and deletes the folder.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import free_port

START_SECONDS = 30.0


def postgres_bindir() -> Path | None:
    """The folder of ``initdb`` and ``postgres``: Debian's newest version, else the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    """One throw-away PostgreSQL server (database ``postgres``, user ``postgres``, no password)."""

    def __init__(self) -> None:
        bindir = postgres_bindir()
        if bindir is None:
            pytest.skip("PostgreSQL is not installed; run `make services`")
        self.bindir = bindir
        self.run_as = "postgres" if os.geteuid() == 0 else None
        if self.run_as is not None:
            try:
                self.owner = pwd.getpwnam(self.run_as)
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run the server")
        # not under pytest's tmp_path: its parents are root's alone, and postgres must reach it
        self.folder = Path(tempfile.mkdtemp(prefix="sparkstorm-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        if self.run_as is not None:
            os.chown(self.folder, self.owner.pw_uid, self.owner.pw_gid)
        self._run([str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                   "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of the server's ``postgres`` database (psycopg 3)."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        """Start the server and wait until it answers a query."""
        self.proc = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-h", "127.0.0.1", "-k", str(self.folder), "-c", "fsync=off",
             "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
             "-c", "max_connections=60", "-c", "shared_buffers=16MB"],
            stdout=subprocess.DEVNULL, stderr=open(self.folder / "postgres.log", "ab"),  # noqa: SIM115
            **self._user())
        wait_for(self._answers, timeout=START_SECONDS, message=f"postgres on port {self.port}")

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are closed)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Run one statement in its own transaction; the rows it returns, if any."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                             dbname="postgres", autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(sql, params)  # type: ignore[arg-type]
            return list(cursor.fetchall()) if cursor.description else []

    def _answers(self) -> bool:
        try:
            return self.execute("select 1") == [(1,)]
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False

    def _user(self) -> dict[str, Any]:
        return {} if self.run_as is None else {"user": self.owner.pw_uid,
                                               "group": self.owner.pw_gid}

    def _run(self, command: list[str]) -> None:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, **self._user())
