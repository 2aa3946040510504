"""Server-side UI sessions; tokens never go back to the browser.

A random id in an HttpOnly cookie names the CSRF token of the session and the cluster token its user
entered.

Example:
    >>> store = SessionStore(max_sessions=2)
    >>> first = store.create()
    >>> store.get(first.id) is first
    True
    >>> _ = store.create(); _ = store.create()
    >>> store.get(first.id) is None   # the oldest is evicted
    True
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

SESSION_COOKIE = "sparkstorm_ui_session"
SESSION_TTL_SECS = 12 * 3600.0


@dataclass
class Session:
    """One browser session."""

    id: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token: str | None = None
    seen: float = field(default_factory=time.monotonic)


class SessionStore:
    """At most ``max_sessions`` sessions in memory, least recently used evicted first."""

    def __init__(self, max_sessions: int = 1000, ttl_secs: float = SESSION_TTL_SECS) -> None:
        self.max_sessions = max_sessions
        self.ttl_secs = ttl_secs
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def create(self) -> Session:
        """A new session."""
        session = Session()
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        return session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of that id, or None (unknown or expired)."""
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            now = time.monotonic()
            if now - session.seen > self.ttl_secs:
                del self._sessions[session_id]
                return None
            session.seen = now
            self._sessions.move_to_end(session_id)
            return session
