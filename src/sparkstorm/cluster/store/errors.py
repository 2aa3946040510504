"""Errors of the state store, the same for every backend.

Backends translate their own failures (kazoo exceptions, ``sqlite3`` errors) into these, so
callers catch one set of classes whatever ``storm.state.store`` says; the development
ZooKeeper server (:mod:`.devzookeeper`) reports with :class:`DevZooKeeperError`. Each class
has one stable default code; :class:`StoreUnavailableError` also uses ``STATE_STORE_CLOSED``
and ``STATE_STORE_CORRUPT``, :class:`DevZooKeeperError` its ``DEV_ZOOKEEPER_*`` codes.

Example:
    >>> err = NoNodeError("no node '/storms/x'", code=NoNodeError.default_code)
    >>> err.code, isinstance(err, LookupError)
    ('STATE_NO_NODE', True)
"""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class StateStoreError(SparkstormError):
    """Root of the state-store errors.

    Args:
        message: what went wrong, at which path, and how to fix it.
        code: stable UPPER_SNAKE identifier; defaults to the class's ``default_code``.
    """

    default_code = "STATE_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message, code=code or self.default_code)


class NoNodeError(StateStoreError, LookupError):
    """The node (or, for a create without ``make_parents``, its parent) does not exist."""

    default_code = "STATE_NO_NODE"


class NodeExistsError(StateStoreError, ValueError):
    """A create found a node already at the path."""

    default_code = "STATE_NODE_EXISTS"


class BadVersionError(StateStoreError, ValueError):
    """A conditional write named a version the node no longer has (someone else wrote)."""

    default_code = "STATE_BAD_VERSION"


class NotEmptyError(StateStoreError, ValueError):
    """A non-recursive delete of a node that has children."""

    default_code = "STATE_NOT_EMPTY"


class EphemeralParentError(StateStoreError, ValueError):
    """A create under an ephemeral node; ephemeral nodes cannot have children (ZooKeeper)."""

    default_code = "STATE_EPHEMERAL_PARENT"


class InvalidPathError(StateStoreError, ValueError):
    """A path that is not absolute, ends in ``/``, or has an empty, ``.`` or ``..`` part."""

    default_code = "STATE_BAD_PATH"


class StoreUnavailableError(StateStoreError, ConnectionError):
    """The store cannot be reached now (server down, database locked, store closed).

    The operation may or may not have been applied when the connection broke mid-call
    (ZooKeeper's rule): re-read before retrying a non-idempotent write.
    """

    default_code = "STATE_UNAVAILABLE"


class CorruptStateError(StateStoreError, ValueError):
    """A node holds bytes the typed cluster state cannot decode; the node is left untouched."""

    default_code = "STATE_CORRUPT_NODE"


class DevZooKeeperError(StateStoreError, RuntimeError):
    """The development ZooKeeper server cannot run.

    Java or ZooKeeper is not installed (``DEV_ZOOKEEPER_JAVA_MISSING``,
    ``DEV_ZOOKEEPER_JAR_MISSING``) or the server exited at start (its port taken, for example).
    """

    default_code = "DEV_ZOOKEEPER_EXITED"


ERROR_CODES: dict[str, type[StateStoreError]] = {
    "DEV_ZOOKEEPER_EXITED": DevZooKeeperError,
    "DEV_ZOOKEEPER_JAR_MISSING": DevZooKeeperError,
    "DEV_ZOOKEEPER_JAVA_MISSING": DevZooKeeperError,
    "STATE_BAD_PATH": InvalidPathError,
    "STATE_BAD_VERSION": BadVersionError,
    "STATE_CORRUPT_NODE": CorruptStateError,
    "STATE_EPHEMERAL_PARENT": EphemeralParentError,
    "STATE_ERROR": StateStoreError,
    "STATE_NODE_EXISTS": NodeExistsError,
    "STATE_NOT_EMPTY": NotEmptyError,
    "STATE_NO_NODE": NoNodeError,
    "STATE_STORE_CLOSED": StoreUnavailableError,
    "STATE_STORE_CORRUPT": StoreUnavailableError,
    "STATE_UNAVAILABLE": StoreUnavailableError,
}
"""Every code the state store raises, sorted, with the class that carries it."""
