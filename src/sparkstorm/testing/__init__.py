"""Harnesses we ship to users: :class:`LocalCluster` runs topologies in this process."""

from sparkstorm.testing.local_cluster import LocalCluster

__all__ = ["LocalCluster"]
