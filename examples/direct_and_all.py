"""Direct and all groupings: a dispatcher sends each job to the worker task it picks
(``emit(..., direct_task=...)``) and broadcasts configuration changes to every task."""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology


class JobSpout(Spout):
    """Emits numbered jobs; every 10th job is also a broadcast 'config' change."""

    outputs = ["job"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.next_id = 0
        self.limit = int(storm_conf.get("jobs.count", 0))

    def next_tuple(self) -> None:
        if self.limit and self.next_id >= self.limit:
            return
        self.next_id += 1
        self.emit([self.next_id], tup_id=self.next_id)


class DispatcherBolt(Bolt):
    """Picks the worker task for each job (job modulo the workers) and sends it directly."""

    outputs = [Stream(["job", "worker"], name="jobs", direct=True),
               Stream(["version"], name="config")]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.workers = sorted(int(task) for task, component in
                              context["task->component"].items() if component == "worker")

    def process(self, tup: Any) -> None:
        job = tup.values.job
        worker = self.workers[job % len(self.workers)]
        self.emit([job, worker], stream="jobs", direct_task=worker)
        if job % 10 == 0:
            self.emit([job // 10], stream="config")


class WorkerBolt(Bolt):
    """Does a job; keeps the latest config version broadcast to all tasks."""

    outputs = ["job", "worker", "version"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.task = context["taskid"]
        self.version = 0

    def process(self, tup: Any) -> None:
        if tup.stream == "config":
            self.version = tup.values.version
            return
        assert tup.values.worker == self.task, "direct grouping delivered to the wrong task"
        self.emit([tup.values.job, self.task, self.version])


class DirectAndAll(Topology):
    jobs = JobSpout.spec()
    dispatcher = DispatcherBolt.spec(inputs=[jobs])
    worker = WorkerBolt.spec(inputs={dispatcher["jobs"]: Grouping.DIRECT,
                                     dispatcher["config"]: Grouping.ALL}, par=2, num_tasks=3)
