"""The Spark side: the session, each window's job and stages, task placement."""
