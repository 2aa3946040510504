"""A real PostgreSQL server on a free loopback port, one per test session.

Debian's ``postgresql`` (``make services``), run by :class:`~tests.integration.postgresql.server.
PostgresServer` in a temporary folder that is removed afterwards; each test gets its own table
names (its own database would cost a CREATE DATABASE each).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.postgresql.server import PostgresServer


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()
