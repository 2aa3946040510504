"""Storm's ``FailedException``: a bolt fails its input by raising, and goes on.

Any other exception from ``process`` (or ``process_batch``) is a crash: the input fails, the
error is reported and the executor restarts. These two fail the input (the tuple, or a batch
bolt's whole batch: its spouts replay it) and the bolt carries on with the next one in the
same process, as Storm's ``BasicBoltExecutor`` does with ``FailedException``:

- :class:`FailedException`: fail quietly (an expected outcome: a sink's server is down, a
  record is refused); the reason goes with the failure.
- :class:`ReportedFailedException`: fail, and report the exception as the component's error
  (the UI's last error, the log), as Storm's ``ReportedFailedException``.

Example:
    >>> from sparkstorm import BasicBolt
    >>> class Store(BasicBolt):
    ...     def process(self, tup):
    ...         if not tup.values[0]:
    ...             raise FailedException("empty key: replay later")
    >>> issubclass(ReportedFailedException, FailedException)
    True
"""

from __future__ import annotations


class FailedException(Exception):
    """Fail the input being processed and go on (no error reported, no restart)."""


class ReportedFailedException(FailedException):
    """Fail the input being processed, report this as the component's error, and go on."""


__all__ = ["FailedException", "ReportedFailedException"]
