"""Connectors to outside systems: spouts that read from them and bolts that write to them.

Each connector is a package of its own (``kafka``); see docs/connectors.md.
"""
