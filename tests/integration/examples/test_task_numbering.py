"""Nimbus's task infos and the running engine number tasks the same way (Storm's order).

``examples/wordcount.py`` is submitted to an in-process Nimbus, which writes the task infos
(``/tasks/<id>/<task id>``); the same spec and stored conf then run on Spark local mode with
each component swapped for one that writes down the ``context`` its task was given. Every
task's context must map every task id to the component the store names.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.config import load_config
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from sparkstorm.topology.spec import TopologySpec
from tests.integration.spark.components import ContextBolt, ContextSpout

RECORDERS = {"spout": ContextSpout, "bolt": ContextBolt}


def _recording(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with each component's class replaced by one that records its context."""
    components = [{**c, "component": f"{RECORDERS[c['kind']].__module__}:"
                                      f"{RECORDERS[c['kind']].__qualname__}"}
                  for c in spec["components"]]
    return {**spec, "components": components}


def _submit(nimbus: Nimbus, spec: dict[str, Any]) -> str:
    upload_id = nimbus.inbox.begin()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("wordcount.py", "")
    nimbus.inbox.chunk(upload_id, buffer.getvalue())
    nimbus.inbox.finish(upload_id, hashlib.sha256(buffer.getvalue()).hexdigest())
    return nimbus.submit("wordcount", upload_id, spec, {})


def test_task_infos_match_every_running_task_s_context(cluster: LocalCluster,
                                                       tmp_path: Path) -> None:
    from wordcount import WordCount

    spec = _recording(WordCount.topology_spec.to_dict())
    with EmbeddedStore(tmp_path / "store.sqlite") as store:
        state = ClusterState(store)
        state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700,)))
        nimbus = Nimbus(load_config(env={}, cli={"storm.local.dir": str(tmp_path / "nimbus")}),
                        state)
        topology_id = _submit(nimbus, spec)
        stored = {task: info.component_id for task, info in state.task_infos(topology_id).items()}
        stored_conf = nimbus.topology_conf(topology_id)

    # the example: count has 4 tasks, numbered after the acker's
    assert [t for t, c in stored.items() if c == "count"] == [2, 3, 4, 5]
    out = tmp_path / "contexts"
    out.mkdir()
    topology_conf = {k: v for k, v in stored_conf.items()
                     if k.startswith("topology.") and k != "topology.name"}
    cluster.submit_topology("numbering", TopologySpec.from_dict(spec),
                            conf={**topology_conf, "test.dir": str(out)})
    user_tasks = [t for t, c in stored.items() if not c.startswith("__")]
    wait_for(lambda: len(list(out.glob("context-*.json"))) == len(user_tasks), timeout=90,
             message="every task wrote its context")
    cluster.kill_topology("numbering")

    contexts = [json.loads(p.read_text()) for p in out.glob("context-*.json")]
    assert sorted(c["taskid"] for c in contexts) == user_tasks
    for context in contexts:
        assert context["componentid"] == stored[context["taskid"]]
        assert {int(t): c for t, c in context["task->component"].items()} == stored
