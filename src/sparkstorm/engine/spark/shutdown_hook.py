"""A JVM shutdown hook that calls back into the Python driver before Spark stops.

Under ``spark-submit`` the driver's JVM is the process people signal (``kill PID``,
Kubernetes deleting the pod, YARN stopping the container): on SIGTERM it runs its shutdown
hooks, and Spark's own stops the SparkContext at once, which would cut a draining topology's
last windows off. :func:`on_jvm_shutdown` registers a hook with Hadoop's
``ShutdownHookManager`` (which runs Spark's hooks, at priority 40) at a higher priority, so
it runs first: through py4j's callback server it calls a Python function, and Spark stops
only once that returned (or ``timeout`` passed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

HOOK_PRIORITY = 100
"""Above Spark's own hook (``FileSystem.SHUTDOWN_HOOK_PRIORITY + 30``, 40): runs first."""


class _PythonRunnable:
    """A ``java.lang.Runnable`` implemented in Python (py4j calls :meth:`run`)."""

    def __init__(self, function: Callable[[], None]) -> None:
        self.function = function

    def run(self) -> None:
        """Called by the JVM's shutdown hook thread."""
        try:
            self.function()
        except Exception:  # an exception would only be printed by py4j, in the JVM
            logger.exception("the driver's JVM shutdown hook failed")

    class Java:
        """py4j: the Java interface this class implements."""

        implements = ["java.lang.Runnable"]


class ShutdownHook:
    """A registered hook (see :func:`on_jvm_shutdown`); :meth:`remove` unregisters it."""

    def __init__(self, manager: Any, runnable: Any) -> None:
        self._manager = manager
        self._runnable = runnable

    def remove(self) -> None:
        """Unregister the hook (the application ended on its own: nothing to call)."""
        try:
            self._manager.removeShutdownHook(self._runnable)
        except Exception:  # the JVM is already going away: nothing to undo
            logger.debug("JVM shutdown hook not removed", exc_info=True)


def on_jvm_shutdown(sc: Any, function: Callable[[], None], timeout: float) -> ShutdownHook:
    """Call ``function`` when the driver's JVM shuts down, before Spark stops.

    ``function`` runs on a thread of py4j's callback server and should return once the
    topology has drained; the JVM waits for it at most ``timeout`` seconds.
    """
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(sc._gateway)  # type: ignore[no-untyped-call]
    jvm = sc._jvm
    # a JVM Thread around the Python Runnable: Hadoop keeps hooks in a HashSet, and a
    # Thread's hashCode and equals are Java's own (the proxy would ask Python for them)
    runnable = jvm.java.lang.Thread(_PythonRunnable(function), "sparkstorm-drain-hook")
    manager = jvm.org.apache.hadoop.util.ShutdownHookManager.get()
    manager.addShutdownHook(runnable, HOOK_PRIORITY, max(1, int(timeout)),
                            jvm.java.util.concurrent.TimeUnit.SECONDS)
    return ShutdownHook(manager, runnable)


__all__ = ["HOOK_PRIORITY", "ShutdownHook", "on_jvm_shutdown"]
