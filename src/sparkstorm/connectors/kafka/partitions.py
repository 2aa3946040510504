"""Which partitions a spout task reads: Storm's ``RoundRobinManualPartitioner``.

Every task lists the partitions of the topics it reads, sorts them and takes every n-th one
starting at its own index among the component's tasks; so the tasks share the partitions
without a consumer group's rebalance, and agree without talking to each other.

Example:
    >>> parts = [("b", 0), ("a", 1), ("a", 0), ("b", 1), ("a", 2)]
    >>> task_share(parts, 0, 2), task_share(parts, 1, 2)
    ([('a', 0), ('a', 2), ('b', 1)], [('a', 1), ('b', 0)])
    >>> task_position({"taskid": 7, "componentid": "k",
    ...                "task->component": {"5": "k", "6": "x", "7": "k", "9": "k"}})
    (1, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

TopicPartitionKey = tuple[str, int]


def task_share(partitions: Iterable[TopicPartitionKey], index: int,
               count: int) -> list[TopicPartitionKey]:
    """The partitions of task number ``index`` (0-based) out of ``count``."""
    return sorted(partitions)[index::count]


def task_position(context: dict[str, Any]) -> tuple[int, int]:
    """This task's index among its component's tasks, and how many there are."""
    component, task = context["componentid"], int(context["taskid"])
    tasks = sorted(int(t) for t, c in context["task->component"].items() if c == component)
    return tasks.index(task), len(tasks)


def list_partitions(consumer: Any, wanted: Callable[[str], bool],
                    timeout: float) -> list[TopicPartitionKey]:
    """Every partition of the topics ``wanted`` accepts, from the brokers' metadata."""
    metadata = consumer.list_topics(timeout=timeout)
    return sorted((name, p) for name, topic in metadata.topics.items()
                  if topic.error is None and wanted(name) for p in topic.partitions)
