"""Nimbus: the master. Accepts uploads and submissions, assigns workers, watches heartbeats.

- :mod:`.service`: the logic (:class:`~.service.Nimbus`), no HTTP;
- :mod:`.inbox`: chunked uploads and zip checks; :mod:`.stormdist`: code on disk;
- :mod:`.scheduler`: JStorm's slot order behind :class:`~.scheduler.Scheduler`;
- :mod:`.assigner` (assignments and the monitor), :mod:`.cleaner` and :mod:`.umbilical` (the
  worker calls): Nimbus's collaborators, each given the state, stormdist, lock, clock, timings
  and callbacks it uses (:mod:`.topologies` reads StormBases for all of them);
- :mod:`.api`, :mod:`.ui_api`: the REST API (Storm UI paths and the worker umbilical);
- :mod:`.client`: the HTTP client used by the CLI, supervisors and workers.
"""
