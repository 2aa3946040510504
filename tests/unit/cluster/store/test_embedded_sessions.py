"""Sessions of the embedded store under a fake clock: heartbeats, expiry, sweeps, renewal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.testing.polling import wait_for
from tests.fakes import FakeClock

TIMEOUT_MS = 1000

Opener = Callable[..., EmbeddedStore]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_700_000_000.0)


@pytest.fixture
def open_store(tmp_path: Path, clock: FakeClock) -> Iterator[Opener]:
    """Opens stores of one file on the fake clock, without background threads."""
    opened: list[EmbeddedStore] = []

    def make(**kwargs: Any) -> EmbeddedStore:
        options: dict[str, Any] = {"session_timeout_ms": TIMEOUT_MS, "clock": clock,
                                   "background": False}
        store = EmbeddedStore(tmp_path / "store.sqlite", **(options | kwargs))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def test_silent_session_expires_and_its_ephemerals_go(open_store: Opener,
                                                     clock: FakeClock) -> None:
    owner, sweeper = open_store(), open_store()
    owner.create("/supervisors/s1", ephemeral=True)
    owner.create("/persistent")
    clock.advance(TIMEOUT_MS / 1000 - 0.01)
    assert sweeper.sweep_expired_sessions() == []
    clock.advance(0.02)
    sweeper.heartbeat()
    assert sweeper.sweep_expired_sessions() == [owner.session_id]
    assert not sweeper.exists("/supervisors/s1")
    assert sweeper.exists("/persistent") and sweeper.exists("/supervisors")


def test_heartbeats_keep_a_session_alive(open_store: Opener, clock: FakeClock) -> None:
    owner, sweeper = open_store(), open_store()
    owner.create("/eph", ephemeral=True)
    for _ in range(5):
        clock.advance(0.6)
        owner.heartbeat()
        sweeper.heartbeat()
        assert sweeper.sweep_expired_sessions() == []
    assert sweeper.exists("/eph")


def test_an_expired_store_starts_a_new_session(open_store: Opener, clock: FakeClock) -> None:
    owner, sweeper = open_store(), open_store()
    old = owner.session_id
    clock.advance(2)
    sweeper.heartbeat()
    sweeper.sweep_expired_sessions()
    owner.heartbeat()  # finds its row gone
    assert owner.session_id != old
    owner.create("/again", ephemeral=True)
    clock.advance(0.5)
    owner.heartbeat()
    sweeper.heartbeat()
    assert sweeper.sweep_expired_sessions() == []
    assert sweeper.exists("/again")


def test_an_ephemeral_created_after_expiry_belongs_to_a_new_session(open_store: Opener,
                                                                    clock: FakeClock) -> None:
    owner, sweeper = open_store(), open_store()
    old = owner.session_id
    clock.advance(2)
    sweeper.heartbeat()
    sweeper.sweep_expired_sessions()
    owner.create("/eph", ephemeral=True)  # no heartbeat in between: create renews the session
    assert owner.session_id != old
    owner.close()
    assert not sweeper.exists("/eph")


def test_a_new_store_sweeps_clients_that_died_unclosed(open_store: Opener,
                                                       clock: FakeClock) -> None:
    crashed = open_store()
    crashed.create("/eph", ephemeral=True)
    crashed._closed = True  # as if its process died: no clean close, no heartbeats
    clock.advance(5)
    fresh = open_store()
    assert not fresh.exists("/eph")


def test_close_deletes_ephemerals_at_once(open_store: Opener) -> None:
    owner, other = open_store(), open_store()
    owner.create("/eph", ephemeral=True)
    owner.close()
    assert not other.exists("/eph")


def test_background_heartbeats_and_sweeps_with_real_time(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    silent = EmbeddedStore(path, session_timeout_ms=300, background=False)
    alive = EmbeddedStore(path, session_timeout_ms=300)
    try:
        silent.create("/silent", ephemeral=True)
        alive.create("/alive", ephemeral=True)
        wait_for(lambda: not alive.exists("/silent"), 10, interval=0.02,
                 message="silent session swept by the other store's heartbeat thread")
        assert alive.exists("/alive")  # kept alive by its own heartbeats
    finally:
        silent.close()
        alive.close()
