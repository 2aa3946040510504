"""The cost of mutual TLS on executor TCP (issue 30): plain against TLS over loopback, one run.

An executor's TCP door (``engine.wire.gate``) with an echo behind it, called the way Spark
tasks call executors: a new connection per call (connect, TLS handshake when on, token,
request, reply). Prints, for each of plain TCP and TLS, interleaved round by round so the
CPU's speed changes hit both alike:

- small calls per second (a 100-byte request and its reply: the handshake dominates);
- MB/s of one big request and reply per connection (``--mb``, a window's tuples).

    .venv/bin/python benchmarks/wire_tls.py --calls 2000 --mb 16 --rounds 3
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from pathlib import Path

from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import recv_frame, send_frame
from sparkstorm.engine.wire.gate import AuthenticatedListener
from sparkstorm.engine.wire.secure import listener_tls, use
from sparkstorm.tls.material import TlsFiles, make_material, tls_files

TOKEN = "benchmark-token"


def echo(conn: socket.socket) -> None:
    """One request, its echo (an executor answers one request per connection)."""
    send_frame(conn, recv_frame(conn))


def door(files: TlsFiles | None) -> AuthenticatedListener:
    """An executor's TCP door on loopback, TLS with ``files``."""
    return AuthenticatedListener(socket.create_server(("127.0.0.1", 0)), TOKEN, echo,
                                 name="bench", handshake_timeout=5, max_connections=64,
                                 tls=listener_tls(files))


def calls_per_second(endpoint: Endpoint, files: TlsFiles | None, calls: int) -> float:
    """Small calls per second, a connection each."""
    use(files)
    body = b"x" * 100
    start = time.perf_counter()
    for _ in range(calls):
        with endpoint.connect(TOKEN, 5) as sock:
            send_frame(sock, body)
            recv_frame(sock)
    return calls / (time.perf_counter() - start)


def megabytes_per_second(endpoint: Endpoint, files: TlsFiles | None, mb: int) -> float:
    """MB/s of one ``mb`` MB request and its echo (both directions counted)."""
    use(files)
    body = b"t" * (mb << 20)
    start = time.perf_counter()
    with endpoint.connect(TOKEN, 30) as sock:
        send_frame(sock, body)
        assert len(recv_frame(sock)) == len(body)
    return 2 * mb / (time.perf_counter() - start)


def main() -> None:
    """Measure both, interleaved, and print the medians and ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--mb", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wire-tls-")) / "tls"
    make_material(folder, [])
    files = tls_files({"storm.tls.dir": str(folder)})
    doors = {"plain": door(None), "tls": door(files)}
    material = {"plain": None, "tls": files}
    rates: dict[str, list[float]] = {name: [] for name in doors}
    speeds: dict[str, list[float]] = {name: [] for name in doors}
    try:
        for _ in range(args.rounds):
            for name, listener in doors.items():
                endpoint = Endpoint("/no/such/executor.sock", *listener.address)
                rates[name].append(calls_per_second(endpoint, material[name], args.calls))
                speeds[name].append(megabytes_per_second(endpoint, material[name], args.mb))
    finally:
        for listener in doors.values():
            listener.close()
    for name in doors:
        print(f"{name:5s}  calls/s {statistics.median(rates[name]):8.0f}  "
              f"({', '.join(f'{r:.0f}' for r in rates[name])})  "
              f"MB/s {statistics.median(speeds[name]):7.0f}  "
              f"({', '.join(f'{s:.0f}' for s in speeds[name])})")
    rate = {n: statistics.median(rates[n]) for n in doors}
    speed = {n: statistics.median(speeds[n]) for n in doors}
    print(f"TLS/plain: calls/s {rate['tls'] / rate['plain']:.2f}x "
          f"(+{1000 / rate['tls'] - 1000 / rate['plain']:.2f} ms per call), "
          f"MB/s {speed['tls'] / speed['plain']:.2f}x")


if __name__ == "__main__":
    main()
