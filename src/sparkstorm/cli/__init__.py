"""The ``sparkstorm`` command line."""
