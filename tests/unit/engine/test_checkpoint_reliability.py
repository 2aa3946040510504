"""A real SpoutExecutor under ``topology.reliability: checkpoint``.

No acker and no edges: the spout hears ``ack`` for a tuple only once a checkpoint at or
after the window that took it commits, ``fail`` only for the tuples a rollback discards, and
a restore from a committed checkpoint acks what that checkpoint held.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.checkpoint.versioned import dump_versioned
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, RestorePoint
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.testing.polling import wait_for
from tests.unit.engine.helpers import Numbers, Queued


@pytest.fixture
def spout() -> Any:
    started: list[SpoutExecutor] = []

    def make(restore: RestorePoint | None = None) -> tuple[SpoutExecutor, Queued]:
        plan = ExecutionPlan(Numbers.topology_spec, {"topology.reliability": "checkpoint"})
        gid = next(e.gid for e in plan.executors if e.component == "numbers")
        host = make_executor(plan, gid, "t", restore)
        assert isinstance(host, SpoutExecutor)
        started.append(host)
        (instance,) = host.instances.values()
        return host, instance
    yield make
    for host in started:
        host.close()


def window(host: SpoutExecutor, spout: Queued, ids: list[int], number: int,
           checkpoint: bool = False) -> Any:
    """Let the spout emit ``ids``, then window ``number`` takes them."""
    with host.calls:
        spout.todo.extend(ids)
    wait_for(lambda: host.output.count + host.staging.count >= len(ids) and not spout.todo,
             timeout=10, message=f"{ids} emitted")
    return host.run_window(SpoutControl(), number if checkpoint else None, number)


def test_no_acker_tasks_and_no_edges_in_checkpoint_mode(spout: Any) -> None:
    host, instance = spout()
    assert host.plan.acker_tasks_count == 0
    host.run_window(SpoutControl(), None, 0)  # activates
    taken = window(host, instance, [1, 2], 1)
    (rows,) = [batch for batches in taken.rows.values() for batch in batches]
    assert taken.count == 2 and not taken.xor and not taken.inits  # no tree to follow


def test_ack_waits_for_the_checkpoint_covering_the_window(spout: Any) -> None:
    host, instance = spout()
    host.run_window(SpoutControl(), None, 0)
    window(host, instance, [1, 2], 1)
    window(host, instance, [3], 2, checkpoint=True)
    window(host, instance, [4], 3)
    assert instance.acks == []  # taken by windows, nothing committed yet
    host.commit_state(0)
    assert instance.acks == []  # a checkpoint before their windows covers none of them
    host.commit_state(2)
    assert instance.acks == [1, 2, 3]
    host.commit_state(3)
    assert instance.acks == [1, 2, 3, 4] and instance.fails == []
    counters = host.take_stats()
    assert counters.acked == {"default": 4} and counters.complete_count == 4


def test_a_rollback_fails_what_it_discards_and_nothing_else(spout: Any) -> None:
    host, instance = spout()
    host.run_window(SpoutControl(), None, 0)
    window(host, instance, [1], 1)
    window(host, instance, [2], 2, checkpoint=True)
    window(host, instance, [3], 3)
    with host.calls:
        instance.todo.append(5)  # emitted, still in the buffer
    wait_for(lambda: host.output.count + host.staging.count == 1, 10, message="5 emitted")
    host.rollback_state(2)  # checkpoint 2 committed; the old instance never heard it
    assert sorted(instance.fails) == [3, 5] and instance.acks == []


def test_a_restore_acks_what_the_committed_checkpoint_held(spout: Any) -> None:
    host, instance = spout()
    host.run_window(SpoutControl(), None, 0)
    window(host, instance, [1, 2], 1)
    window(host, instance, [3], 2, checkpoint=True)
    assert host.taken_part is not None
    part = ExecutorPart.decode(host.taken_part().encode())  # as written and read back
    assert part.pending == {} and list(part.handed.values()) == [[1, 2, 3]]  # ids, no trees
    restored, fresh = spout(RestorePoint(2, part))
    assert fresh.acks == [1, 2, 3]  # the checkpoint is committed: its tuples are done
    assert fresh.fails == []
    restored.commit_state(2)
    assert fresh.acks == [1, 2, 3]  # not twice


def test_a_part_written_before_ids_were_kept_as_a_list_still_restores(spout: Any) -> None:
    """A format-1 part (no ``handed``) held a checkpoint-mode spout's ids as trees."""
    host, _ = spout()
    (task,) = host.instances
    older = dump_versioned(1, {}, {task: {0: (7, 0.0, "default"), 1: (8, 0.0, "default")}})
    part = ExecutorPart.decode(older)
    assert part.handed == {}
    restored, fresh = spout(RestorePoint(2, part))
    assert fresh.acks == [7, 8]
    assert restored.collectors[task].pending_roots == {}


def test_an_ack_that_raises_at_commit_still_acks_the_rest(spout: Any) -> None:
    """A commit acks a window's ids in one go; one ``ack`` raises.

    That error is recorded, the other ids are still acked, and the executor is restarted
    as for any raising call.
    """
    host, instance = spout()
    host.run_window(SpoutControl(), None, 0)
    window(host, instance, [1, 2, 3, 4], 1, checkpoint=True)
    heard = instance.acks

    def ack(tup_id: Any) -> None:
        if tup_id == 2:
            msg = "ack of 2 failed"
            raise RuntimeError(msg)
        heard.append(tup_id)

    instance.ack = ack
    host.commit_state(1)
    assert heard == [1, 3, 4]
    assert host.must_restart
    assert any("ack of 2 failed" in str(error) for error in host.errors)
