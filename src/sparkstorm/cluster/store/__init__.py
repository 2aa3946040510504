"""The cluster state store: a ZooKeeper-shaped tree of byte nodes, two backends, typed state.

- :class:`StateStore` (:mod:`.base`): the raw interface; errors in :mod:`.errors`.
- :class:`~.embedded.EmbeddedStore`: a SQLite file under ``storm.local.dir`` (one machine).
- :class:`~.zookeeper.ZooKeeperStore`: ZooKeeper through kazoo (clusters).
- :class:`~.cluster_state.ClusterState`: storms, assignments, task infos, supervisors, worker
  heartbeats, errors and committed windows, on top of either backend.

Example:
    >>> import tempfile
    >>> conf = {"storm.state.store": "embedded", "storm.local.dir": tempfile.mkdtemp()}
    >>> with open_store(conf) as store:
    ...     store.create("/supervisors/s1", b"{}", ephemeral=True)
    '/supervisors/s1'
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkstorm.cluster.store.base import StateStore, Watch
from sparkstorm.cluster.store.errors import (
    BadVersionError,
    CorruptStateError,
    EphemeralParentError,
    InvalidPathError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StateStoreError,
    StoreUnavailableError,
)


def open_store(conf: Mapping[str, object]) -> StateStore:
    """Open the state store that ``storm.state.store`` names.

    ``"embedded"`` opens ``<storm.local.dir>/state/store.sqlite``; ``"zookeeper"`` connects
    to ``storm.zookeeper.servers``:``storm.zookeeper.port``. Both put every node under
    ``storm.zookeeper.root`` and use ``storm.zookeeper.session.timeout`` for ephemeral
    nodes. Keys missing from ``conf`` take their declared defaults. kazoo is imported only
    for ``"zookeeper"``.

    Args:
        conf: an effective configuration, e.g. from :func:`sparkstorm.config.load_config`.

    Returns:
        The open store; close it (or use ``with``) when done.

    Raises:
        ConfigError: ``CONFIG_OUT_OF_RANGE`` for an unknown ``storm.state.store``;
            ``CONFIG_WRONG_TYPE`` for a state-store key of the wrong type.
        StoreUnavailableError: the store cannot be opened or reached.
    """
    from sparkstorm.config import conf_str

    kind = conf_str(conf, "storm.state.store")
    if kind == "embedded":
        from sparkstorm.cluster.store.embedded import EmbeddedStore

        return EmbeddedStore.from_conf(conf)
    if kind == "zookeeper":
        from sparkstorm.cluster.store.zookeeper import ZooKeeperStore

        return ZooKeeperStore.from_conf(conf)
    from sparkstorm.errors import ConfigError

    msg = (
        f"config key 'storm.state.store' is {kind!r}, which is not a state store; "
        "set it to 'embedded' (one machine) or 'zookeeper' (a ZooKeeper ensemble)"
    )
    raise ConfigError(msg, code="CONFIG_OUT_OF_RANGE")


__all__ = [
    "BadVersionError",
    "CorruptStateError",
    "EphemeralParentError",
    "InvalidPathError",
    "NoNodeError",
    "NodeExistsError",
    "NotEmptyError",
    "StateStore",
    "StateStoreError",
    "StoreUnavailableError",
    "Watch",
    "open_store",
]
