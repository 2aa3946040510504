"""TLS between a cluster's hosts: the per-cluster material and the ``ssl`` contexts."""
