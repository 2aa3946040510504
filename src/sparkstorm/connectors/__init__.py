"""Connectors to outside systems: spouts that read from them and bolts that write to them.

Each connector is a package of its own (``kafka``, ``files``, ``redis``, ``sql``); see
docs/connectors.md. ``window_batch`` and ``settings_check`` hold what the Redis and SQL bolts
share.
"""
