"""Real client libraries through the host, driven through pipes without Spark.

pystorm (JSON and msgpack) and node components (examples/multilang/resources).
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.unit.multilang.harness import bolt, spout, tick, transcript, tup

RESOURCES = Path(__file__).resolve().parents[3] / "examples" / "multilang" / "resources"
CONF = {"topology.multilang.resources.dir": str(RESOURCES)}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _pystorm(name: str, serializer: str) -> list[str]:
    return [sys.executable, "words.py", name, serializer]


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_pystorm_bolt_splits_anchors_and_acks(serializer: str) -> None:
    shell = bolt(_pystorm("split", serializer), CONF, serializer=serializer)
    inputs = [tup(n, "the cow jumped") for n in range(3)]
    for item in inputs:
        shell.process(item)
    shell.end_window()
    shell.close()
    emits = shell._collector.emits
    assert [e["values"][0] for e in emits] == ["the", "cow", "jumped"] * 3
    assert [e["anchors"] for e in emits] == [[t] for t in inputs for _ in range(3)]
    assert shell._collector.acked == inputs


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_pystorm_batching_bolt_acks_windows_later(serializer: str) -> None:
    shell = bolt(_pystorm("count", serializer), CONF, serializer=serializer)
    words = [tup(w, 0) for w in ["a", "b", "a"]]
    for item in words:
        shell.process(item)
    shell.process_tick(tick(1))
    shell.end_window()
    assert shell.pending_count == 3, "a batch closes on the second tick"
    shell.process_tick(tick(1))
    shell.end_window()
    shell.close()
    counts = {e["values"][0]: e["values"][1] for e in shell._collector.emits}
    assert counts == {"a": 2, "b": 1}
    assert set(words) <= set(shell._collector.acked) and shell.pending_count == 0


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_pystorm_reliable_spout(serializer: str, tmp_path: Path) -> None:
    shell = spout(_pystorm("sentences", serializer), {**CONF, "sentences.count": 3},
                  serializer=serializer, transcript=str(tmp_path / "t"))
    shell.activate()
    for _ in range(4):
        shell.next_tuple()
    ids = [e["tup_id"] for e in shell._collector.emits]
    shell.fail(ids[1])  # ReliableSpout replays it within the fail command
    shell.ack(ids[0])
    shell.close()
    assert ids == [0, 1, 2]
    assert [e["tup_id"] for e in shell._collector.emits] == [0, 1, 2, 1]
    if serializer != "json":
        return
    sent = transcript(tmp_path, "to_child").split(b"\nend\n")
    assert b'{"command":"fail","id":1}' in sent and b'{"command":"ack","id":0}' in sent
    assert b"[7,8]" not in sent, "pystorm asks for no task ids"


@needs_node
def test_node_bolt_logs_before_its_pid_and_pairs_task_ids(tmp_path: Path) -> None:
    shell = bolt(["node", "split.js"], CONF, transcript=str(tmp_path / "t"))
    inputs = [tup(n, "crème brûlée für alle") for n in range(2)]
    for item in inputs:
        shell.process(item)
    shell.end_window()
    shell.close()
    words = ["crème", "brûlée", "für", "alle"]
    assert [e["values"][0] for e in shell._collector.emits] == words * 2
    assert shell._collector.acked == inputs
    from_child = transcript(tmp_path, "from_child")
    assert "brûlée".encode() in from_child, "node writes raw UTF-8"
    assert from_child.index(b"starting") < from_child.index(b'{"pid"'), "log before the pid"
    replies = transcript(tmp_path, "to_child").split(b"\nend\n").count(b"[7,8]")
    assert replies == 8, "exactly one task-id list per emit"


@needs_node
def test_node_spout_emits_and_replays(tmp_path: Path) -> None:
    shell = spout(["node", "sentences.js"], {**CONF, "sentences.count": 2})
    shell.activate()
    for _ in range(3):
        shell.next_tuple()
    shell.fail(0)
    shell.ack(1)
    shell.next_tuple()
    shell.close()
    assert [e["tup_id"] for e in shell._collector.emits] == [0, 1, 0]
    assert Counter(type(e["tup_id"]) for e in shell._collector.emits) == {int: 3}
