"""The Agent Chat views' open chat sessions, closed when nothing else closes them.

KNIME tells a node's Python side nothing when its view closes: the data service ``get_data_service`` returned has
no close or dispose hook on any supported version (5.5's launcher calls only ``handleJsonRpcRequest`` on it, 5.6+
also ``getViewData`` when the view is applied or closed), and the view's context carries no node id. So a session
(its event loop thread, its MCP sessions, the stdio servers it started) would live until the Python process ends.
This registry closes one:

- when the same node's view opens again: KNIME then makes a new data service, and the old page is gone. "The same
  node" is the node's settings and inputs (:func:`chat_key`), the identity the view context offers; two nodes alike
  in both share one chat, the older view then answers that the chat was closed;
- when it has been idle (no page call, no turn running) for :data:`IDLE_SECONDS`: a view left open that long is
  most likely closed; its conversation is kept by the view data (5.6+) and continues when the view opens again;
- when the Python process exits, so stdio servers do not outlive it.
"""

from __future__ import annotations

import atexit
import hashlib
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knime_mcp.agent.chat_session import ChatSession

__all__ = ["CHAT_SESSIONS", "IDLE_SECONDS", "ChatSessions", "chat_key"]

IDLE_SECONDS = 3600.0
"""How long a session waits without a page call or a running turn before it is closed."""


def chat_key(*parts: Any) -> str:
    """A digest naming one node's chat: its settings and inputs, as text."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


class ChatSessions:
    """Open chat sessions by node (:func:`chat_key`), each with the time it was last used on ``clock``; thread-safe."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle_seconds = idle_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, tuple[ChatSession, float]] = {}
        self._closed: weakref.WeakKeyDictionary[ChatSession, str] = weakref.WeakKeyDictionary()
        self._reaper: threading.Thread | None = None

    def adopt(self, key: str, session: ChatSession) -> None:
        """Keep ``session`` as ``key``'s chat, closing the one it replaces."""
        with self._lock:
            old = self._sessions.get(key)
            self._sessions[key] = (session, self._clock())
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap_forever, name="chat-session-reaper", daemon=True)
                self._reaper.start()
        if old is not None and old[0] is not session:
            self._close(old[0], "the node's view was opened again")

    def touch(self, session: ChatSession) -> None:
        """Note that the page used ``session`` now."""
        with self._lock:
            for key, (kept, _) in self._sessions.items():
                if kept is session:
                    self._sessions[key] = (session, self._clock())

    def reap(self) -> None:
        """Close the sessions idle for longer than the idle time."""
        now = self._clock()
        with self._lock:
            idle = [
                key
                for key, (session, used) in self._sessions.items()
                if not session.running and now - used > self._idle_seconds
            ]
            closing = [self._sessions.pop(key)[0] for key in idle]
        for session in closing:
            self._close(session, f"it was not used for {self._idle_seconds / 60:.0f} minutes")

    def closed_because(self, session: ChatSession) -> str | None:
        """Why this registry closed ``session``; None while it is open."""
        with self._lock:
            return self._closed.get(session)

    def close_all(self) -> None:
        """Close every session (at exit: stdio servers end with the process)."""
        with self._lock:
            closing = [session for session, _ in self._sessions.values()]
            self._sessions.clear()
        for session in closing:
            session.close()

    def _close(self, session: ChatSession, reason: str) -> None:
        with self._lock:
            self._closed[session] = reason
        session.close()

    def _reap_forever(self) -> None:
        while True:
            time.sleep(min(self._idle_seconds / 4, 60.0))
            self.reap()


CHAT_SESSIONS = ChatSessions()
atexit.register(CHAT_SESSIONS.close_all)
