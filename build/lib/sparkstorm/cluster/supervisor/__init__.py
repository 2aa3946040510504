"""The supervisor: registers its slots, downloads code, launches and watches workers.

- :mod:`.launcher`: worker processes (own process group, pid records on disk);
- :mod:`.supervisor`: the sync loop against the assignments.
"""
