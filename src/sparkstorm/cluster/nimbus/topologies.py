"""Reading topologies' StormBases from the cluster state, as Nimbus and its collaborators do.

Example:
    >>> import tempfile, pathlib
    >>> from sparkstorm.cluster.store.cluster_state import ClusterState
    >>> from sparkstorm.cluster.store.embedded import EmbeddedStore
    >>> with EmbeddedStore(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite") as store:
    ...     storms(ClusterState(store))
    {}
"""

from __future__ import annotations

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import StormBase


def storms(state: ClusterState) -> dict[str, StormBase]:
    """Every topology's StormBase by id (one removed while reading is left out)."""
    found = {}
    for topology_id in state.active_storms():
        base = state.get_storm(topology_id)
        if base is not None:
            found[topology_id] = base
    return found


def require_storm(state: ClusterState, topology_id: str) -> StormBase:
    """One topology's StormBase.

    Raises:
        NimbusError: ``TOPOLOGY_NOT_FOUND``.
    """
    base = state.get_storm(topology_id)
    if base is None:
        msg = (f"no topology with id {topology_id!r}; list them with 'sparkstorm list' "
               "or GET /api/v1/topology/summary")
        raise NimbusError(msg, code="TOPOLOGY_NOT_FOUND")
    return base
