"""Executor processes: the task instances of one executor, driven one window at a time."""
