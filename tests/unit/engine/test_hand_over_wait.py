"""The driver hears a chained spout stage's hand-over from its executors (issue 33).

``watch_hand_over`` sets the window's first-stage event only when every root executor said
it served the window; anything else leaves the event to the job's end (a late start of the
next window, never an early one). The executors' side, a real server answering ``served``,
is in ``test_window_turns.py``; the whole path in ``test_overlap.py``.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sparkstorm.engine.driver.hand_over_wait import SLICE_SECONDS, watch_hand_over
from sparkstorm.engine.wire.protocol import NOT_YET, OK, ServedRequest


def _watch(answers: dict[int, list[Any]], job: Future[Any] | None = None, bound: float = 30.0
           ) -> tuple[threading.Event, list[tuple[int, ServedRequest]]]:
    """Run the watcher over roots 1 and 2; each answers ``answers[gid]`` in turn.

    An exception is raised instead; the last answer repeats.
    """
    asked: list[tuple[int, ServedRequest]] = []

    def call(gid: int, request: ServedRequest, timeout: float) -> Any:
        asked.append((gid, request))
        queue = answers[gid]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    done = threading.Event()
    with ThreadPoolExecutor(1) as threads:
        watch_hand_over(threads, call, [1, 2], 7, done, bound, job or Future())
    return done, asked


def test_every_root_served_sets_the_event() -> None:
    done, asked = _watch({1: [NOT_YET, NOT_YET, OK], 2: [OK]})  # root 1 asked until served
    assert done.is_set()
    request = ServedRequest(7, SLICE_SECONDS)
    assert asked == [(1, request), (1, request), (1, request), (2, request)]


def test_a_root_that_cannot_be_called_leaves_the_event_to_the_job() -> None:
    done, asked = _watch({1: [OK], 2: [ConnectionError("refused")]})
    assert not done.is_set()
    assert [gid for gid, _ in asked] == [1, 2]


def test_a_root_not_served_within_the_bound_leaves_the_event_to_the_job() -> None:
    done, asked = _watch({1: [OK], 2: [NOT_YET]}, bound=-1.0)  # the bound already over
    assert not done.is_set() and asked == []


def test_a_job_that_ended_first_asks_nothing_more() -> None:
    ended: Future[Any] = Future()
    ended.set_result(([], 0.0))
    done, asked = _watch({1: OK, 2: OK}, ended)
    assert not done.is_set() and asked == []
