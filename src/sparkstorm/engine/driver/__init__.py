"""The topology's driver: the window loop (``loop``) and what it composes.

Empty on purpose: importing a module of this package (the endpoint lookup, which Spark tasks
use) must not import the window loop and everything it needs.
"""
