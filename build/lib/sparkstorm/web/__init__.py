"""The web UI: Storm-UI-style pages served by ``sparkstorm ui``, built on Nimbus's /api/v1."""
