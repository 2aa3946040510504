"""The Spark data plane: plan, executor processes, routing, acking and the window loop.

Only ``session.py`` and ``driver.py`` import pyspark; executor processes never load it.
"""
