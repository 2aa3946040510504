"""The state store interface: a tree of nodes holding bytes, shaped like ZooKeeper.

Two backends implement it: :class:`~sparkstorm.cluster.store.zookeeper.ZooKeeperStore`
(a ZooKeeper ensemble through kazoo) and
:class:`~sparkstorm.cluster.store.embedded.EmbeddedStore` (a SQLite file shared by the
processes of one machine). The typed cluster state
(:mod:`sparkstorm.cluster.store.cluster_state`) is written once on top of this interface.

Semantics (both backends, checked by ``tests/integration/zookeeper/test_store_contract.py``):

- **Paths** are absolute (``/storms/wc-1-17``); ``"/"`` is the store's root, i.e.
  ``storm.zookeeper.root``, which the store creates when it opens.
- **Versions** are ZooKeeper's data versions: 0 at creation, +1 on every :meth:`set`.
- **Ephemeral** nodes belong to the session of the store that created them and are deleted
  when it closes or its session expires (``storm.zookeeper.session.timeout`` ms without
  contact). They cannot have children. A store whose session expired gets a new session
  (a new :attr:`session_id`) and goes on working; its old ephemerals are gone, so owners
  re-create them (as supervisors do on every heartbeat).
- **Sequence** nodes get ZooKeeper's 10-digit suffix, taken from the parent's child-change
  counter, so it grows monotonically per parent.
- **Watches** are persistent, like kazoo's ``ChildrenWatch``/``DataWatch``: the callback is
  called once at registration (in the caller's thread) with the current value and again,
  on a background thread, after every change made by any client of the same store. Changes
  close together may be coalesced: a callback sees the latest value, not every
  intermediate one, and is never called twice in a row with the same value. Callbacks of
  one watch never run concurrently. They must return quickly (hand long work to another
  thread); an exception in a callback is logged and the watch stays armed. After a lost
  connection the store re-reads and re-arms every watch when it reconnects.
- **Errors** are the classes of :mod:`sparkstorm.cluster.store.errors`, whatever the backend.

Example:
    >>> import tempfile
    >>> from sparkstorm.cluster.store.embedded import EmbeddedStore
    >>> with EmbeddedStore(tempfile.mkdtemp() + "/store.sqlite") as store:
    ...     store.create("/storms/wc-1-17", b"{}")
    ...     store.set("/storms/wc-1-17", b'{"status": "ACTIVE"}')
    ...     store.get("/storms/wc-1-17")
    ...     store.children("/storms")
    '/storms/wc-1-17'
    1
    (b'{"status": "ACTIVE"}', 1)
    ['wc-1-17']
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import TracebackType
from typing import Self

from sparkstorm.cluster.store._watches import WatchEntry
from sparkstorm.cluster.store.errors import NodeExistsError

ChildrenCallback = Callable[[list[str]], object]
"""Called with the sorted child names; ``[]`` while the node does not exist."""

DataCallback = Callable[[bytes | None, int], object]
"""Called with ``(data, version)``; ``(None, -1)`` while the node does not exist."""


class Watch:
    """Handle of a persistent watch.

    Returned by :meth:`StateStore.watch_children` and :meth:`StateStore.watch_data`.

    Args:
        entry: the backend's bookkeeping of the watch.
    """

    def __init__(self, entry: WatchEntry) -> None:
        self._entry = entry

    @property
    def path(self) -> str:
        """The watched path."""
        return self._entry.path

    @property
    def active(self) -> bool:
        """False once :meth:`cancel` was called or the store was closed."""
        return not self._entry.cancelled

    def cancel(self) -> None:
        """Stop the watch; no callback starts after this returns. Safe to call twice."""
        self._entry.cancel()


class StateStore(ABC):
    """A ZooKeeper-shaped store of byte nodes, shared by every daemon of a cluster.

    Thread-safe: one store may be used from many threads. Open one store per process (after
    any fork). Use it as a context manager or call :meth:`close`.
    """

    @abstractmethod
    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequence: bool = False,
        make_parents: bool = True,
    ) -> str:
        """Create a node.

        Args:
            path: the node's path; with ``sequence``, the prefix the suffix is appended to
                (``"/errors/wc/count/e"`` gives ``"/errors/wc/count/e0000000003"``).
            data: the node's bytes.
            ephemeral: delete the node when this store's session ends.
            sequence: append a 10-digit counter unique under the parent.
            make_parents: create missing ancestors as empty persistent nodes.

        Returns:
            The path actually created (with the sequence suffix, if any).

        Raises:
            NodeExistsError: a node exists at ``path``.
            NoNodeError: the parent is missing and ``make_parents`` is False.
            EphemeralParentError: the parent is an ephemeral node.
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def set(self, path: str, data: bytes, version: int = -1) -> int:
        """Replace a node's data.

        Args:
            path: an existing node.
            data: the new bytes.
            version: the version the node must have (compare-and-set); -1 for any.

        Returns:
            The node's new version.

        Raises:
            NoNodeError: no node at ``path``.
            BadVersionError: the node's version is not ``version``.
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def get(self, path: str) -> tuple[bytes, int]:
        """Read a node.

        Returns:
            ``(data, version)``.

        Raises:
            NoNodeError: no node at ``path``.
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Tell whether a node exists.

        Raises:
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def children(self, path: str) -> list[str]:
        """List the names (not paths) of a node's children, sorted.

        Raises:
            NoNodeError: no node at ``path``.
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def delete(self, path: str, *, recursive: bool = False) -> None:
        """Delete a node, and with ``recursive`` everything under it.

        Raises:
            NoNodeError: no node at ``path``.
            NotEmptyError: the node has children and ``recursive`` is False.
            InvalidPathError: ``path`` is malformed or is ``"/"``.
            StoreUnavailableError: the store cannot be reached.
        """

    @abstractmethod
    def watch_children(self, path: str, callback: ChildrenCallback) -> Watch:
        """Call ``callback(children)`` now and whenever the children of ``path`` change.

        The node need not exist: the callback gets ``[]`` until it does, and again if it is
        deleted. See the module docstring for threading and coalescing.

        Raises:
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached for the first read.
        """

    @abstractmethod
    def watch_data(self, path: str, callback: DataCallback) -> Watch:
        """Call ``callback(data, version)`` now and whenever the node at ``path`` changes.

        Creation, every :meth:`set` and deletion (``(None, -1)``) count as changes.

        Raises:
            InvalidPathError: ``path`` is malformed.
            StoreUnavailableError: the store cannot be reached for the first read.
        """

    @property
    @abstractmethod
    def session_id(self) -> str:
        """The current session's id (hex); it changes when the session expires."""

    @abstractmethod
    def close(self) -> None:
        """End the session (its ephemeral nodes go at once), stop watches, free resources.

        Idempotent. Every later call raises :class:`StoreUnavailableError`
        (``STATE_STORE_CLOSED``).
        """

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its ancestors as empty persistent nodes unless they exist."""
        if self.exists(path):
            return
        with contextlib.suppress(NodeExistsError):  # another client won the race: fine
            self.create(path)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
