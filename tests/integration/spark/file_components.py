"""Components of the file connector tests (imported by class path in executor processes)."""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt


class SlowPassBolt(Bolt):
    """Passes ``[n]`` on after a short pause, so a run lasts long enough to be cut short."""

    outputs = ["n"]

    def process(self, tup: Any) -> None:
        import time

        time.sleep(0.002)
        self.emit([int(tup.values[0])])
