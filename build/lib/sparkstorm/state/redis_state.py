"""State in Redis, as Storm's ``RedisKeyValueStateProvider`` keeps it.

Each task's state is a Redis hash named after its namespace (``<component>-<task>``);
keys and values are pickled. Updates are buffered in the task until ``prepare_commit(txid)``
writes them to ``<namespace>$prepare`` (a deleted key is an empty value, which no pickle
is) with the transaction id in ``<namespace>$prepare$txid``; ``commit(txid)`` applies them to
the hash and records ``<namespace>$txid``, in one MULTI/EXEC transaction. After a restart
:meth:`RedisKeyValueState.restore` completes a prepared transaction the checkpoint committed
and drops one it did not, so Redis always holds exactly the committed window's state.

Configured with ``topology.state.provider.config``, Storm's JSON or a dict::

    {"jedisPoolConfig": {"host": "127.0.0.1", "port": 6379, "database": 0,
                         "password": null, "timeout": 2000}}
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator, Mapping
from typing import Any

from sparkstorm.errors import ConfigError
from sparkstorm.state.base import KeyValueState, StateError, StateProvider, check_prepared

TOMBSTONE = b""
"""A deleted key in the prepared hash (no pickle is empty)."""


def _dump(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


class RedisKeyValueState(KeyValueState):
    """One task's state in Redis (see the module docstring)."""

    def __init__(self, namespace: str, client: Any) -> None:
        self.namespace = namespace
        self.client = client
        self.pending: dict[bytes, bytes] = {}
        self.prepare_key = f"{namespace}$prepare"
        self.prepare_txid_key = f"{namespace}$prepare$txid"
        self.txid_key = f"{namespace}$txid"

    def put(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value`` among the pending changes (Redis sees it when prepared)."""
        self.pending[_dump(key)] = _dump(value)

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``: pending, else prepared, else committed; or ``default``."""
        field = _dump(key)
        raw = self.pending.get(field)
        if raw is None:
            raw = self._call("hget", self.prepare_key, field)
        if raw is None:
            raw = self._call("hget", self.namespace, field)
        return default if raw is None or raw == TOMBSTONE else pickle.loads(raw)

    def delete(self, key: Any) -> Any:
        """Mark ``key`` deleted among the pending changes; return its value (None if none)."""
        value = self.get(key)
        self.pending[_dump(key)] = TOMBSTONE
        return value

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        """Every ``(key, value)`` pair: committed, overlaid by prepared, then pending changes."""
        merged = dict(self._call("hscan_iter", self.namespace))
        merged.update(self._call("hscan_iter", self.prepare_key))
        merged.update(self.pending)
        for field, raw in merged.items():
            if raw != TOMBSTONE:
                yield pickle.loads(field), pickle.loads(raw)

    def prepare_commit(self, txid: int) -> None:
        """Move the pending changes to the prepared hash of ``txid``, in one transaction."""
        pipe = self.client.pipeline(transaction=True)
        if self.pending:
            pipe.hset(self.prepare_key, mapping=self.pending)
        pipe.set(self.prepare_txid_key, txid)
        self._run(pipe)
        self.pending = {}

    def commit(self, txid: int) -> None:
        """Apply the prepared changes of ``txid`` to the committed hash, in one transaction.

        Raises:
            StateError: ``STATE_NOT_PREPARED`` when ``txid`` was not prepared.
        """
        prepared = self._call("get", self.prepare_txid_key)
        check_prepared(int(prepared) if prepared is not None else None, txid, self.namespace)
        changes = self._call("hgetall", self.prepare_key)
        pipe = self.client.pipeline(transaction=True)
        puts = {field: raw for field, raw in changes.items() if raw != TOMBSTONE}
        deletes = [field for field, raw in changes.items() if raw == TOMBSTONE]
        if puts:
            pipe.hset(self.namespace, mapping=puts)
        if deletes:
            pipe.hdel(self.namespace, *deletes)
        pipe.delete(self.prepare_key, self.prepare_txid_key)
        pipe.set(self.txid_key, txid)
        self._run(pipe)

    def rollback(self) -> None:
        """Drop the pending and the prepared changes."""
        self.pending = {}
        self._call("delete", self.prepare_key, self.prepare_txid_key)

    def committed_txid(self) -> int | None:
        """The last transaction committed to Redis."""
        raw = self._call("get", self.txid_key)
        return None if raw is None else int(raw)

    def restore(self, snapshot: Any, committed_txid: int | None) -> None:
        """Finish a transaction the checkpoint prepared and committed but not yet applied here.

        The crash came in between; drop any other prepared or pending change.
        """
        self.pending = {}
        prepared = self._call("get", self.prepare_txid_key)
        if prepared is not None and committed_txid is not None and int(prepared) <= committed_txid:
            self.commit(int(prepared))
        else:
            self.rollback()

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.client, method)(*args)
        except Exception as exc:
            raise _unreachable(self.namespace, exc) from exc

    def _run(self, pipe: Any) -> None:
        try:
            pipe.execute()
        except Exception as exc:
            raise _unreachable(self.namespace, exc) from exc


def _unreachable(namespace: str, exc: Exception) -> StateError:
    msg = (
        f"state {namespace!r} in Redis failed: {type(exc).__name__}: {exc}; check that Redis "
        "runs where topology.state.provider.config points (jedisPoolConfig host/port)"
    )
    return StateError(msg, code="STATE_BACKEND_UNAVAILABLE")


def redis_settings(config: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """redis-py's connection arguments from Storm's provider config.

    Example:
        >>> redis_settings('{"jedisPoolConfig": {"host": "h", "port": 7000, "timeout": 500}}')
        {'host': 'h', 'port': 7000, 'db': 0, 'password': None, 'socket_timeout': 0.5}

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the config is not a JSON object or dict.
    """
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError as exc:
            msg = (f"topology.state.provider.config is not valid JSON ({exc}); write it as "
                   '{"jedisPoolConfig": {"host": "127.0.0.1", "port": 6379}}')
            raise ConfigError(msg, code="CONFIG_WRONG_TYPE") from exc
    if config is not None and not isinstance(config, Mapping):
        msg = (f"topology.state.provider.config must be an object, got {config!r}; write it "
               'as {"jedisPoolConfig": {"host": "127.0.0.1", "port": 6379}}')
        raise ConfigError(msg, code="CONFIG_WRONG_TYPE")
    pool = dict((config or {}).get("jedisPoolConfig") or {})
    return {"host": pool.get("host", "127.0.0.1"), "port": int(pool.get("port", 6379)),
            "db": int(pool.get("database", 0)), "password": pool.get("password"),
            "socket_timeout": int(pool.get("timeout", 2000)) / 1000}


class RedisStateProvider(StateProvider):
    """``topology.state.provider: redis``: one connection pool per executor."""

    def __init__(self, config: str | Mapping[str, Any] | None) -> None:
        import redis  # only topologies that keep state in Redis need the client

        self.client = redis.Redis(**redis_settings(config))

    def new_state(self, namespace: str) -> KeyValueState:
        """The state of ``namespace``, on this provider's connection pool."""
        return RedisKeyValueState(namespace, self.client)

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()
