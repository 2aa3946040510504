"""``RedisStoreBolt``, ``RedisLookupBolt`` and ``RedisFilterBolt``: storm-redis's, per window.

Each tuple is mapped to its command(s) in ``process`` (the key from the field ``key_field``,
the value from ``value_field``, the container from ``additional_key``); at the end of each
window one pipeline sends the whole window's commands (one round trip). A tuple is acked, or
emitted from and acked, once its window's pipeline came back. When the pipeline fails (Redis
down, a timeout) every tuple of the window is failed with ``REDIS_UNAVAILABLE``, so its spout
replays it, and the outage is the component's error in the UI; the next window tries again.
A tuple that cannot be mapped (``REDIS_TUPLE_UNMAPPABLE``) or whose command Redis refuses
(``REDIS_COMMAND_REJECTED``, e.g. WRONGTYPE) goes to the ``errors`` stream
(:mod:`sparkstorm.connectors.window_batch`) and is acked.

Usage::

    from sparkstorm.connectors.redis import RedisLookupBolt, RedisStoreBolt

    store = RedisStoreBolt.spec(inputs=[counts], url="redis://cache:6379/0",
                                data_type="hash", additional_key="word-counts",
                                key_field="word", value_field="count")
    lookup = RedisLookupBolt.spec(inputs=[words], url="redis://cache:6379/0",
                                  data_type="hash", additional_key="word-counts",
                                  key_field="word", output_fields=["word", "value"])
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from sparkstorm.connectors.redis.commands import (
    Command,
    filter_command,
    found,
    lookup_command,
    lookup_value,
    store_commands,
)
from sparkstorm.connectors.redis.settings import RedisSettings
from sparkstorm.connectors.window_batch import (
    ERROR_STREAM,
    ConnectorError,
    WindowBatchBolt,
    error_stream,
    settings_from,
)
from sparkstorm.topology.tuple import Tuple

_pools: dict[tuple[str, int], Any] = {}
_pools_lock = threading.Lock()


def connection_pool(url: str, timeout_ms: int) -> Any:
    """The executor process's connection pool for ``url`` (one per process, shared by tasks)."""
    import redis

    with _pools_lock:
        pool = _pools.get((url, timeout_ms))
        if pool is None:
            seconds = timeout_ms / 1000
            pool = redis.ConnectionPool.from_url(url, socket_timeout=seconds,
                                                 socket_connect_timeout=seconds)
            _pools[(url, timeout_ms)] = pool
        return pool


class RedisBolt(WindowBatchBolt[list[Command]]):
    """What the three Redis bolts share; see the module docstring."""

    kind: ClassVar[str] = "bolt"
    redis_kind: ClassVar[str] = ""
    outputs: ClassVar[list[Any]] = [error_stream()]
    unavailable_code: ClassVar[str] = "REDIS_UNAVAILABLE"

    @classmethod
    def read_settings(cls, raw: dict[str, Any]) -> RedisSettings:
        """The settings of docs/connectors.md; ``REDIS_CONFIG_INVALID`` when bad."""
        return RedisSettings.read(raw, cls.redis_kind)

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Read the settings; take this process's connection pool."""
        import redis

        self.init_batching(type(self).__name__)
        raw = settings_from(storm_conf, self.where, "REDIS_CONFIG_INVALID")
        self.settings = RedisSettings.read(raw, self.redis_kind)
        self.client = redis.Redis(connection_pool=connection_pool(
            self.settings.url, self.settings.timeout_ms))

    def map_tuple(self, tup: Tuple) -> list[Command]:
        """The commands of ``tup`` (see :mod:`sparkstorm.connectors.redis.commands`)."""
        field = self.field_reader(tup, "REDIS_TUPLE_UNMAPPABLE")
        try:
            return self.commands(field)
        except ConnectorError as exc:
            if exc.args[0].startswith(self.where):  # a missing field: already says it all
                raise
            msg = (f"{self.where}: tuple {list(tup.values)!r} from {tup.component}:"
                   f"{tup.stream}: {exc.args[0]}; it went to the {ERROR_STREAM!r} stream")
            raise ConnectorError(msg, code=exc.code) from None

    def commands(self, field: Any) -> list[Command]:
        """The commands of the tuple whose fields ``field`` reads."""
        raise NotImplementedError

    def flush(self, batch: list[tuple[Tuple, list[Command]]]) -> None:
        """Send the window's commands in one pipeline; settle each tuple by its replies."""
        pipe = self.client.pipeline(transaction=False)
        for _, commands in batch:
            for command in commands:
                pipe.execute_command(*command)  # type: ignore[no-untyped-call]
        replies = pipe.execute(raise_on_error=False)
        position = 0
        for tup, commands in batch:
            own = replies[position:position + len(commands)]
            position += len(commands)
            refused = next((r for r in own if isinstance(r, Exception)), None)
            if refused is not None:
                self.reject(tup, "REDIS_COMMAND_REJECTED",
                            f"{self.where}: Redis refused {commands[0][0]} for tuple "
                            f"{list(tup.values)!r} ({refused}); it went to the "
                            f"{ERROR_STREAM!r} stream; check the data type of the keys")
            else:
                self.settle(tup, own[0])

    def settle(self, tup: Tuple, reply: Any) -> None:
        """Finish ``tup`` given its first command's reply."""
        self.ack(tup)

    def describe_failure(self, exc: Exception) -> str:
        """The pipeline failed: say where Redis was expected."""
        where = self.settings.url.rsplit("@", 1)[-1]  # no password in messages
        return f"Redis at {where} did not answer the pipeline ({type(exc).__name__}: {exc})"

    def emit_outputs(self, tup: Tuple, value: Any = None) -> None:
        """Emit the output fields of ``tup`` (``value_output`` is ``value``), then ack it."""
        field = self.field_reader(tup, "REDIS_TUPLE_UNMAPPABLE")
        try:
            out = [value if name == self.settings.value_output and self.redis_kind == "lookup"
                   else field(name) for name in self.settings.output_fields]
        except ConnectorError as exc:
            self.reject(tup, exc.code, exc.args[0])
            return
        self.emit(out, anchors=[tup])
        self.ack(tup)

    def close(self) -> None:
        """Let go of the client (the process's pool stays for its other tasks)."""
        client = getattr(self, "client", None)
        if client is not None:
            client.close()

    cleanup = close


class RedisStoreBolt(RedisBolt):
    """Writes each tuple's value under its key (Storm's ``RedisStoreBolt``).

    string ``SET``, hash ``HSET additional_key key value``, list ``RPUSH``, set ``SADD``,
    sorted set ``ZADD additional_key value key`` (the value is the score), HyperLogLog
    ``PFADD``; ``ttl_seconds`` adds an expiry. Emits nothing but its ``errors`` stream.
    """

    redis_kind = "store"

    def commands(self, field: Any) -> list[Command]:
        """The write(s) of one tuple."""
        s = self.settings
        return store_commands(s, field(s.key_field), field(s.value_field))


class RedisLookupBolt(RedisBolt):
    """Emits each tuple's ``output_fields`` with the value found under its key.

    (Storm's ``RedisLookupBolt``.) string ``GET``, hash ``HGET``, list ``LRANGE 0 -1``, set
    ``SCARD``, sorted set ``ZSCORE``, HyperLogLog ``PFCOUNT``; a missing key gives None.
    """

    redis_kind = "lookup"

    def commands(self, field: Any) -> list[Command]:
        """The read of one tuple."""
        return [lookup_command(self.settings, field(self.settings.key_field))]

    def settle(self, tup: Tuple, reply: Any) -> None:
        """Emit the tuple's fields and the value found, then ack it."""
        self.emit_outputs(tup, lookup_value(self.settings, reply))


class RedisFilterBolt(RedisBolt):
    """Passes on the tuples whose key is in Redis and acks the others (Storm's ``RedisFilterBolt``).

    string ``EXISTS``, hash ``HEXISTS``, set ``SISMEMBER``, sorted set ``ZRANK``, list ``LPOS``
    (the container is ``additional_key``), HyperLogLog ``PFCOUNT`` > 0.
    """

    redis_kind = "filter"

    def commands(self, field: Any) -> list[Command]:
        """The membership test of one tuple."""
        return [filter_command(self.settings, field(self.settings.key_field))]

    def settle(self, tup: Tuple, reply: Any) -> None:
        """Emit the tuple's output fields when its key was found; ack it either way."""
        if found(self.settings, reply):
            self.emit_outputs(tup)
        else:
            self.ack(tup)
