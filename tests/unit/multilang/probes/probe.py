"""A raw-protocol multilang child for host tests: ``probe.py MODE``.

Speaks the protocol by hand (no client library) so each test controls the exact bytes:
well-behaved modes act like storm.py (blocking task-id replies) or pystorm
(``need_task_ids: false``); hostile modes break one rule each. Behaviour is chosen by MODE
and, for bolts, by the first value of each input tuple (a command word).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1]
buffer = bytearray()
commands: list[dict] = []
task_ids: list[list[int]] = []


def write(data: bytes) -> None:
    if MODE == "split":  # one byte per write: the host must reassemble
        for i in range(len(data)):
            os.write(1, data[i:i + 1])
        return
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def encode(obj: object, raw_utf8: bool = False) -> bytes:
    return (json.dumps(obj, ensure_ascii=not raw_utf8) + "\nend\n").encode("utf-8")


def send(obj: object, raw_utf8: bool = False) -> None:
    write(encode(obj, raw_utf8))


def read() -> object:
    global buffer
    scanned = 0
    while True:
        at = buffer.find(b"\nend\n", max(0, scanned - 4))
        if at >= 0:
            body, buffer = buffer[:at], buffer[at + 5:]
            return json.loads(body)
        scanned = len(buffer)
        chunk = os.read(0, 1 << 20)
        if not chunk:
            sys.exit(0)
        buffer += chunk


def read_command() -> dict:
    if commands:
        return commands.pop(0)
    while isinstance(msg := read(), list):
        task_ids.append(msg)
    return msg  # type: ignore[return-value]


def read_task_ids() -> list[int]:
    if task_ids:
        return task_ids.pop(0)
    while not isinstance(msg := read(), list):
        commands.append(msg)  # type: ignore[arg-type]
    return msg


def handshake() -> dict:
    setup = read()
    assert isinstance(setup, dict)
    if MODE == "before_pid":
        send({"command": "log", "msg": "hello before pid"})
        send({"command": "emit", "tuple": ["early"], "need_task_ids": False})
    pid = os.getpid()
    open(os.path.join(setup["pidDir"], str(pid)), "w").close()
    if MODE == "bad_pid":  # the PID as PROBE_PID (JSON) instead
        send({"pid": json.loads(os.environ["PROBE_PID"])})
    elif MODE == "pid_in_array":
        send([pid])
    else:
        send({"pid": pid})
    return setup


def emit(values: list, anchors: list[str] | None = None, **extra: object) -> list[int] | None:
    msg: dict = {"command": "emit", "tuple": values, **extra}
    if anchors is not None:
        msg["anchors"] = anchors
    send(msg, raw_utf8=MODE == "rawutf8")
    if not msg.get("task") and msg.get("need_task_ids", True):
        return read_task_ids()
    return None


def bolt_tuple(tup: dict) -> None:
    word, tid = tup["tuple"][0] if tup["tuple"] else None, tup["id"]
    if tup["stream"] == "__tick" and MODE == "tick_no_ack":  # storm.py's Bolt, storm.rb
        return
    if tup["stream"] == "__tick":
        emit(["tick", tup["comp"], tup["task"], tup["tuple"]], [tid], need_task_ids=False)
    elif word == "echo":  # storm.py style: blocks for the task ids, then reports them
        tasks = emit(tup["tuple"], [tid])
        emit(["tasks", tasks], [tid])
    elif word == "quiet":  # pystorm style
        emit(tup["tuple"], [tid], need_task_ids=False)
    elif word == "direct":
        emit(["d"], [tid], stream="direct", task=tup["tuple"][1])
    elif word == "nobody":  # storm.py style, on a stream nobody subscribes to
        tasks = emit(["n"], [tid], stream="nobody")
        emit(["tasks", tasks], [tid])
    elif word in ("task_false", "task_float", "task_empty"):  # tasks parse_emit refuses
        task = {"task_false": False, "task_float": 0.0, "task_empty": ""}[word]
        send({"command": "emit", "tuple": ["x"], "anchors": [tid], "task": task,
              "need_task_ids": False})
    elif word == "task0":
        emit(["t0"], [tid], task=0)
    elif word == "hold":  # ack later, like a batching bolt
        held.append(tid)
        return
    elif word == "release":
        for old in held:
            send({"command": "ack", "id": old})
        held.clear()
    elif word == "failme":
        send({"command": "fail", "id": tid})
        return
    elif word == "garbage":
        write(b"hello from print()\n")
    elif word == "badjson":
        write(b"{\"command\": \"emit\", \"tuple\": [\nend\n")
    elif word == "array":
        send([1, 2, 3])
    elif word == "nocommand":
        send({"tuple": ["x"]})
    elif word == "empty":
        write(b"end\n")
    elif word == "badutf8":
        write(b"{\"command\":\"log\",\"msg\":\"\xff\xfe\"}\nend\n")
    elif word == "badfield":
        send({"command": "emit", "tuple": ["x"], "need_task_ids": "yes"})
    elif word == "unknown":
        send({"command": "frobnicate"})
    elif word == "ackunknown":
        send({"command": "ack", "id": "12345"})
    elif word == "acktwice":
        send({"command": "ack", "id": tid})
        send({"command": "ack", "id": tid})
        return
    elif word == "anchorunknown":
        emit(["x"], ["999"], need_task_ids=False)
    elif word == "emptystream":
        emit(["x"], [tid], stream="", need_task_ids=False)
    elif word == "exit":
        sys.stderr.write("probe: exiting on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif word == "log":
        for level in (0, 1, 2, 3, 4, None, 9):
            msg = {"command": "log", "msg": f"level {level}"}
            if level is not None:
                msg["level"] = level
            send(msg)
    elif word == "error":
        send({"command": "error", "msg": "something broke"})
        send({"command": "sync"})
    elif word == "metrics":
        send({"command": "metrics", "name": "hits", "params": None})
        send({"command": "metrics", "name": "hits", "params": 4})
        send({"command": "metrics", "name": "level", "params": {"x": 1}})
        send({"command": "metrics", "name": "nope", "params": 1})
    elif word == "stderr":
        block = b"e" * 1023 + b"\n"
        for _ in range(tup["tuple"][1]):
            os.write(2, block)
    elif word == "huge":
        emit(["x" * tup["tuple"][1]], [tid], need_task_ids=False)
    elif word == "sleep":
        time.sleep(tup["tuple"][1])
    elif word == "env":
        emit([os.getcwd(), os.environ.get("PROBE_VAR"), os.environ.get("PATH")], [tid],
             need_task_ids=False)
    elif word == "merged":  # three messages in one write
        write(b"".join(encode({"command": "emit", "tuple": [i], "anchors": [tid],
                               "need_task_ids": False}) for i in range(3)))
    elif word == "crlf":
        write(b'{"command":"emit","tuple":["crlf"],"anchors":["' + tid.encode()
              + b'"],"need_task_ids":false}\r\nend\r\n')
    else:  # anything else: pass the values through, pystorm style
        emit(tup["tuple"], [tid], need_task_ids=False)
    send({"command": "ack", "id": tid})


held: list[str] = []


def first_fault() -> bool:
    """``fault_once``: True the first time ever (a marker file at $PROBE_MARKER).

    So the child restarted after the fault behaves.
    """
    marker = os.environ["PROBE_MARKER"]
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def run_bolt() -> None:
    stuck = False
    trigger = int(os.environ.get("PROBE_TRIGGER", "20"))
    while True:
        tup = read_command()
        if tup["stream"] == "__heartbeat":
            if MODE != "no_heartbeat" and not stuck:
                send({"command": "sync"})
            continue
        if stuck:  # reads on, but neither answers heartbeats nor acks
            continue
        if MODE == "fault_once" and tup["tuple"][:1] == [trigger] and first_fault():
            fault = sys.argv[2]
            if fault == "badjson":
                write(b"{\"command\": \"emit\", \"tuple\": [\nend\n")
            elif fault == "garbage":  # merges with the next message
                write(b"hello from print()\n")
            elif fault == "no_heartbeat":
                stuck = True
            continue
        bolt_tuple(tup)


def spout_fault(fault: str) -> None:
    if fault == "badjson":
        write(b"{\"command\": \"emit\", \"tuple\": [\nend\n")
    elif fault == "garbage":  # merges with the sync that follows
        write(b"hello from print()\n")
    elif fault == "exit":
        sys.stderr.write("probe: exiting on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif fault == "nosync":
        time.sleep(3600)
    elif fault == "unknown":
        send({"command": "frobnicate"})
    elif fault == "taskids":  # a task-id list nobody asked for
        send([7, 8])


def run_spout(setup: dict) -> None:
    ids = json.loads(os.environ.get("PROBE_IDS", "[]"))
    hang_marker = None
    if MODE == "spout_hang_once":  # hangs in its first next ever; a restarted child emits
        hang_marker = os.path.join(setup["conf"]["test.dir"], "hang.marker")
        ids = list(range(int(setup["conf"].get("probe.count", 10))))
    while True:
        cmd = read_command()
        name = cmd["command"]
        if name == "next":
            if MODE == "spout_hang":
                time.sleep(3600)
            if hang_marker and not os.path.exists(hang_marker):
                open(hang_marker, "w").close()
                time.sleep(3600)
            if MODE == "spout_slow":  # answers, but later than the host's wait slice
                time.sleep(float(os.environ.get("PROBE_SLEEP", "0.3")))
            if MODE == "spout_ack_back":
                send({"command": "ack", "id": 1})
            if ids and MODE == "spout_direct":  # to the task in PROBE_TASK
                emit(["d"], None, id=ids.pop(0), stream="direct",
                     task=int(os.environ["PROBE_TASK"]))
            elif ids:
                msg_id = ids.pop(0)
                tasks = emit(["n", msg_id], None, id=msg_id)
                send({"command": "log", "msg": f"tasks {tasks}"})
            elif MODE == "spout_unreliable":
                emit(["n", "u"], None, need_task_ids=False)
            elif MODE == "spout_fault":  # once PROBE_IDS are emitted: the fault in argv[2]
                spout_fault(sys.argv[2])
        elif name in ("ack", "fail"):
            send({"command": "log", "msg": json.dumps({name: cmd["id"]})})
        elif name in ("activate", "deactivate"):
            send({"command": "log", "msg": name})
        else:
            send({"command": "log", "msg": f"unknown {name}"})
        send({"command": "sync"})


def main() -> None:
    if MODE == "crash_at_start":
        sys.stderr.write("probe: cannot start, missing config\n")
        sys.exit(4)
    if MODE == "no_handshake":
        time.sleep(3600)
    if MODE == "fault_once" and sys.argv[2] in ("crash_at_start", "no_handshake") \
            and first_fault():
        if sys.argv[2] == "no_handshake":
            time.sleep(3600)
        sys.stderr.write("probe: cannot start, missing config\n")
        sys.exit(4)
    if MODE == "stdout_first":
        write(b"Starting up...\n")
    setup = handshake()
    if MODE == "exit_after_handshake":
        sys.exit(0)
    if MODE.startswith("spout"):
        run_spout(setup)
    else:
        run_bolt()


if __name__ == "__main__":
    main()
