"""Nimbus refuses a topology too big for its limits, which a submitter cannot raise (issue 30).

``topology.max.components`` and ``topology.max.executors`` are checked against Nimbus's own
conf (the submitter's conf is checked too, by the shared validation); a worker's share of
the executors against ``supervisor.max.executors``. Each refusal has its code, removes the
upload and records nothing.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.config import load_config
from sparkstorm.errors import TopologyError
from tests.unit.cluster.nimbus.helpers import SPEC
from tests.unit.cluster.nimbus.helpers import submit as submit_spec


def _spec(bolts: int, par: int) -> dict[str, Any]:
    """SPEC's spout with ``bolts`` bolts reading it, every component with ``par`` executors."""
    spout = {**SPEC["components"][0], "par": par, "num_tasks": par}
    return {"components": [spout, *({
        "name": f"b{i}", "kind": "bolt", "component": "t:B",
        "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
        "inputs": [{"source": "word", "stream": "default", "grouping": {"type": "SHUFFLE"}}],
        "par": par, "num_tasks": par} for i in range(bolts))]}


def _nimbus(tmp_path: Path, state: ClusterState, **limits: int) -> Nimbus:
    conf = load_config(env={}, cli={"storm.local.dir": str(tmp_path / "local"), **limits})
    return Nimbus(conf, state)


def _submit(nimbus: Nimbus, spec: dict[str, Any], conf: dict[str, Any] | None = None) -> str:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("t.py", "")
    upload_id = nimbus.inbox.begin()
    nimbus.inbox.chunk(upload_id, data.getvalue())
    nimbus.inbox.finish(upload_id, hashlib.sha256(data.getvalue()).hexdigest())
    return nimbus.submit("big", upload_id, spec, {"storm.cluster.token": "secret",
                                                  **(conf or {})})


@pytest.mark.parametrize(("limits", "spec", "conf", "code"), [
    # 5 components against Nimbus's 4, even when the submitter raises the key
    ({"topology.max.components": 4}, _spec(4, 1), {"topology.max.components": 100},
     "COMPONENTS_ABOVE_LIMIT"),
    # 3 components of 4 executors: 12 against Nimbus's 10
    ({"topology.max.executors": 10}, _spec(2, 4), {"topology.max.executors": 100},
     "EXECUTORS_ABOVE_LIMIT"),
    # the submitter's own conf is checked too (the shared validation)
    ({}, _spec(2, 4), {"topology.max.executors": 11}, "EXECUTORS_ABOVE_LIMIT"),
    # 12 executors on 2 workers: 6 per worker against 5 per supervisor
    ({"supervisor.max.executors": 5}, _spec(2, 4),
     {"topology.workers": 2, "supervisor.max.executors": 100},
     "SUPERVISOR_EXECUTORS_ABOVE_LIMIT"),
])
def test_a_topology_over_a_limit_is_refused_with_its_code(
        tmp_path: Path, state: ClusterState, limits: dict[str, int], spec: dict[str, Any],
        conf: dict[str, Any], code: str) -> None:
    nimbus = _nimbus(tmp_path, state, **limits)
    with pytest.raises(TopologyError) as caught:
        _submit(nimbus, spec, conf)
    assert caught.value.code == code
    assert "big" in str(caught.value)
    assert sorted(nimbus.inbox.folder.iterdir()) == []
    assert nimbus.storms() == {} and nimbus.stormdist.topology_ids() == []


def test_a_topology_within_the_limits_is_accepted(tmp_path: Path, state: ClusterState) -> None:
    nimbus = _nimbus(tmp_path, state, **{"topology.max.components": 3,
                                         "topology.max.executors": 12,
                                         "supervisor.max.executors": 6})
    assert _submit(nimbus, _spec(2, 4), {"topology.workers": 2}).startswith("big-")
    assert submit_spec(nimbus, "small")  # the one-spout spec of the other tests


def test_the_defaults_refuse_the_500_components_of_issue_30(tmp_path: Path,
                                                          state: ClusterState) -> None:
    nimbus = _nimbus(tmp_path, state)
    with pytest.raises(TopologyError) as caught:
        _submit(nimbus, _spec(499, 1))
    assert caught.value.code == "COMPONENTS_ABOVE_LIMIT"
