"""Nimbus's cleaner removes a killed topology's checkpoint folder after its retention.

On an embedded store with a fake clock; the folders are real ones under ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

from sparkstorm.checkpoint import CheckpointStore
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.config import load_config
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import register, submit

RETENTION = 3600


def _checkpointed(nimbus: Nimbus, tmp_path: Path, name: str, **conf: object) -> tuple[str, Path]:
    """Submit ``name`` with checkpoints on, and write it a committed checkpoint."""
    root = tmp_path / "cp"
    topology_id = submit(nimbus, name, {
        "topology.checkpoint.windows": 2, "topology.checkpoint.dir": str(root),
        "topology.checkpoint.retention.secs": RETENTION, **conf})
    folder_name = str(conf.get("topology.checkpoint.id") or topology_id)
    store = CheckpointStore(str(root), folder_name)
    store.commit(4, [store.write_part(4, "driver", b"ledger")])
    return topology_id, root / folder_name


def test_a_killed_topology_s_checkpoints_go_after_the_retention(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock, tmp_path: Path) -> None:
    register(state, "s1", 6700, 6701, 6702)
    killed, killed_folder = _checkpointed(nimbus, tmp_path, "killed")
    alive, alive_folder = _checkpointed(nimbus, tmp_path, "alive")
    named, named_folder = _checkpointed(nimbus, tmp_path, "named",
                                        **{"topology.checkpoint.id": "kept-for-restart"})
    nimbus.kill(killed, wait_secs=0)
    nimbus.kill(named, wait_secs=0)
    clock.advance(RETENTION - 1)
    nimbus.cleaner.clean_all()
    assert killed_folder.is_dir(), "kept for the retention time (to look at, or copy)"
    clock.advance(2)
    assert nimbus.cleaner.clean_checkpoints() == [killed]
    assert not killed_folder.exists()
    assert alive_folder.is_dir(), "a live topology's checkpoints stay"
    assert named_folder.is_dir(), "topology.checkpoint.id names checkpoints to resume from"
    assert nimbus.cleaner.clean_checkpoints() == []
    assert alive in state.active_storms()


def test_a_restarted_nimbus_still_removes_them_and_finds_leftovers(
        tmp_path: Path, state: ClusterState, clock: FakeClock) -> None:
    conf = load_config(env={}, cli={"storm.local.dir": str(tmp_path / "local")})
    first = Nimbus(conf, state, clock=clock)
    register(state, "s1", 6700, 6701)
    killed, killed_folder = _checkpointed(first, tmp_path, "killed")
    crashed, crashed_folder = _checkpointed(first, tmp_path, "crashed")
    first.kill(killed, wait_secs=0)
    state.teardown_topology(crashed)  # as if Nimbus died before deleting its files
    second = Nimbus(conf, state, clock=clock)  # the notes are on disk
    assert second.cleaner.clean_dead_topologies() == [crashed]
    clock.advance(RETENTION)
    assert second.cleaner.clean_checkpoints() == [crashed, killed]
    assert not killed_folder.exists() and not crashed_folder.exists()
    assert (tmp_path / "cp").is_dir(), "the checkpoint root itself stays"
