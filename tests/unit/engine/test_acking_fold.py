"""The acker's array fold against a plain per-root ledger, on random windows.

``Acker.process_window`` folds a window's traffic as arrays (``engine.driver.acker._WindowFold``);
the reference below is the per-root dict ledger it replaced, Storm's algorithm written
out root by root. Random windows mix trees that complete in their window, trees that span
windows, resets, fails (of new, old and unknown roots), contributions to unknown roots,
inits of roots already open and several acker tasks; every verdict, reason, ledger entry
and executed count must be the same.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from sparkstorm.engine.driver.acker import Acker, Verdicts
from sparkstorm.engine.wire.failures import Failure
from sparkstorm.engine.wire.messages import WindowMeta


class ReferenceAcker:
    """Storm's XOR ledger, one root at a time (the acker before the array fold)."""

    def __init__(self, tasks: int) -> None:
        self.ledger: dict[int, list[int]] = {}  # root -> [xor, spout task]
        self.executed = 0
        self.tasks = tasks

    def process_window(self, metas: list[WindowMeta]) -> Verdicts:
        verdicts = Verdicts()
        for meta in metas:
            for root, task in meta.inits.items():
                self.ledger.setdefault(root, [0, task])
        touched = []
        for meta in metas:
            for root, value in meta.xor.items():
                if root in self.ledger:
                    self.ledger[root][0] ^= value
                    self.executed += 1
                    touched.append(root)
            for root in meta.resets:
                if root in self.ledger:
                    verdicts.reset[self.ledger[root][1]].append(root)
        for meta in metas:
            for root, why in meta.failed.items():
                entry = self.ledger.pop(root, None)
                if entry is not None:
                    verdicts.fail[entry[1]].append(root)
                    verdicts.reasons[root] = why
        for root in touched:
            entry = self.ledger.get(root)
            if entry is not None and entry[0] == 0:
                del self.ledger[root]
                verdicts.ack[entry[1]].append(root)
        return verdicts


def _sorted(mapping: dict[int, list[int]]) -> dict[int, list[int]]:
    return {task: sorted(roots) for task, roots in mapping.items() if roots}


def _new_trees(rng: random.Random, spout: int, open_roots: list[int],
               xor: dict[int, dict[int, int]], failed: dict[int, Failure],
               resets: list[int]) -> WindowMeta:
    """One spout executor's new trees; most get bolt contributions that close them."""
    inits, spout_xor = {}, {}
    for _ in range(rng.randrange(40)):
        root, edge = rng.getrandbits(64), rng.getrandbits(64)
        inits[root], spout_xor[root] = 10 + spout * 2 + rng.randrange(2), edge
        if rng.random() < 0.8:  # acked by the bolts: 1 to 3 contributions closing it
            last = edge
            for gid in rng.sample((2, 3, 4), rng.randrange(3)):
                part = rng.getrandbits(64)
                last ^= part
                xor[gid][root] = part
            xor[5][root] = last
        if rng.random() < 0.05:
            failed[root] = Failure("error", f"boom {root % 7}")
        if rng.random() < 0.05:
            resets.append(root)
    if open_roots and rng.random() < 0.3:  # an init of a root already open
        inits[rng.choice(open_roots)] = 10
    return WindowMeta(spout, "spout", spout_xor, inits)


def _random_window(rng: random.Random, open_roots: list[int]) -> list[WindowMeta]:
    """Spout metas with new trees, bolt metas closing some of them and some older ones."""
    xor: dict[int, dict[int, int]] = defaultdict(dict)  # executor -> root -> value
    failed: dict[int, Failure] = {}
    resets: list[int] = []
    metas = [_new_trees(rng, spout, open_roots, xor, failed, resets) for spout in (0, 1)]
    for root in open_roots:
        roll = rng.random()
        if roll < 0.3:
            xor[6][root] = rng.getrandbits(64)
        elif roll < 0.35:
            failed[root] = Failure("timeout", "")
        elif roll < 0.4:
            resets.append(root)
    for _ in range(rng.randrange(3)):  # unknown roots (timed out long ago)
        xor[7][rng.getrandbits(64)] = rng.getrandbits(64)
        failed[rng.getrandbits(64)] = Failure("error", "late")
    metas.extend(WindowMeta(gid, "bolt", values) for gid, values in xor.items())
    metas.append(WindowMeta(8, "bolt", failed=failed, resets=resets))
    rng.shuffle(metas)
    return [WindowMeta.decode(m.encode()) for m in metas]  # as the driver gets them


@pytest.mark.parametrize("tasks", [1, 3])
@pytest.mark.parametrize("seed", range(6))
def test_fold_matches_the_per_root_ledger(tasks: int, seed: int) -> None:
    rng = random.Random(seed)
    acker, reference = Acker(list(range(20, 20 + tasks)), 1e9), ReferenceAcker(tasks)
    acked = 0
    for _ in range(12):
        open_roots = sorted(reference.ledger)
        metas = _random_window(rng, open_roots)
        got, want = acker.process_window(metas), reference.process_window(metas)
        for name in ("ack", "fail", "reset"):
            assert _sorted(getattr(got, name)) == _sorted(getattr(want, name)), name
        assert got.reasons == want.reasons
        ledger = {root: [entry.xor, entry.spout_task]
                  for task in acker.tasks for root, entry in task.ledger.items()}
        assert ledger == reference.ledger
        for index, task in enumerate(acker.tasks):
            assert all(root % tasks == index for root in task.ledger)
        assert sum(task.executed for task in acker.tasks) == reference.executed
        acked += sum(len(roots) for roots in want.ack.values())
    assert acked > 100 and reference.ledger  # trees closed, and others spanned windows


def test_fold_acks_every_complete_tree_of_a_big_window() -> None:
    rng = random.Random(7)
    inits, spout, bolt = {}, {}, {}
    for _ in range(5000):
        root, edge = rng.getrandbits(64), rng.getrandbits(64)
        inits[root], spout[root], bolt[root] = 3, edge, edge
    metas = [WindowMeta.decode(WindowMeta(0, "s", spout, inits).encode()),
             WindowMeta.decode(WindowMeta(1, "b", bolt).encode())]
    acker = Acker([9], 30.0)
    verdicts = acker.process_window(metas)
    assert sorted(verdicts.ack[3]) == sorted(inits)
    assert acker.open_trees == 0
    assert acker.tasks[0].executed == 10000
