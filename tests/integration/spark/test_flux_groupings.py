"""Storm Flux files run on Spark: one YAML file per grouping.

The files are included by one topology, so one run covers them all; each bolt's tasks record
what they received.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from sparkstorm.flux import load_flux_file
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for

FLUX = Path(__file__).resolve().parent / "flux"
COUNT = 40


def received(out: Path, component: str) -> dict[int, list[tuple[int, str]]]:
    """Per task of ``component``: the (n, key) it received, in order."""
    tasks: dict[int, list[tuple[int, str]]] = {}
    for path in out.glob(f"{component}-*.txt"):
        task = int(path.stem.rsplit("-", 1)[1])
        tasks[task] = [(int(n), key) for n, key in
                       (line.split() for line in path.read_text().splitlines())]
    return tasks


def test_every_flux_grouping_delivers_as_storm_does(cluster: LocalCluster,
                                                    tmp_path: Path) -> None:
    flux = load_flux_file(FLUX / "groupings.yaml")
    assert flux.spec.config["flux.test.count"] == COUNT
    cluster.submit_topology(flux.name, flux.spec, conf={"flux.test.out": str(tmp_path)})
    wait_for(lambda: cluster.get_topology_stats(flux.name)["components"].get(
        "numbers", {}).get("acked", 0) >= 2 * COUNT, timeout=120,
        message="every number acked by every bolt")
    cluster.kill_topology(flux.name)
    everything = sorted((n, f"k{n % 4}") for n in range(COUNT))

    def merged(component: str) -> list[tuple[int, str]]:
        return sorted(t for tups in received(tmp_path, component).values() for t in tups)

    for component in ("shuffle", "none", "local-or-shuffle", "fields", "partial-key",
                      "global", "direct"):
        assert merged(component) == everything, f"{component}: each tuple exactly once"
    all_tasks = received(tmp_path, "all")
    assert len(all_tasks) == 2 and all(sorted(t) == everything for t in all_tasks.values())
    global_tasks = received(tmp_path, "global")
    assert len(global_tasks[min(global_tasks)]) == COUNT, "GLOBAL: the lowest task"
    direct_tasks = received(tmp_path, "direct")
    assert len(direct_tasks[min(direct_tasks)]) == COUNT, "DIRECT: the task the spout named"
    for component, most in (("fields", 1), ("partial-key", 2)):
        tasks_of_key: dict[str, set[int]] = defaultdict(set)
        for task, tups in received(tmp_path, component).items():
            for _, key in tups:
                tasks_of_key[key].add(task)
        assert all(len(tasks) <= most for tasks in tasks_of_key.values()), component
