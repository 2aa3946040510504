"""The cluster worker: one topology's Spark driver, launched by a supervisor.

Run as ``python -m sparkstorm.cluster.worker --nimbus URL --worker-id ID --topology-id ID
--code-dir DIR`` with the cluster token in ``SPARKSTORM_STORM_CLUSTER_TOKEN``.
"""
