"""Test double: a chat session that plays a scripted turn, for the page's tests where no real one is needed.

It has the ChatSession interface the view's data service uses (``send``, ``running``, ``events``, ``stop``,
``decide``, ``answer_form``) and emits the events a turn's ``script`` emits, in a thread of its own, as the real
session does. A script gets the session and the person's text; ``emit`` adds an event, ``wait_for`` blocks until the
person decided (an approval, a form) or stopped. What the page sent is kept in ``decisions`` and ``answers``; an
app's requests (``app_request``) in ``app_requests``, each answered at once with an ``app_reply`` event by the
``apps`` function given (its return value is the result; what it raises, the error).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Script = Callable[["FakeChatSession", str], None]
AppAnswer = Callable[[str, str, "dict[str, Any] | None"], "dict[str, Any]"]
"""Answers an app's request: ``(call_id, method, params)`` to the result."""

_PATIENCE = 60.0


class FakeChatSession:
    def __init__(self, script: Script, apps: AppAnswer | None = None) -> None:
        self._script = script
        self._apps = apps
        self.app_requests: list[tuple[str, str, dict[str, Any] | None]] = []
        self._events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self.decisions: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self.stopped = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def emit(self, event_type: str, /, **fields: Any) -> None:
        with self._changed:
            self._events.append({"seq": len(self._events) + 1, "type": event_type, **fields})
            self._changed.notify_all()

    def events(self, after: int = 0) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(event) for event in self._events[after:]]

    def send(self, text: str) -> None:
        self.emit("user", text=text)
        self._thread = threading.Thread(target=self._turn, args=(text,), daemon=True)
        self._thread.start()

    def _turn(self, text: str) -> None:
        try:
            self._script(self, text)
        finally:
            self.emit("turn_end")

    def stop(self) -> None:
        with self._changed:
            self.stopped = True
            self._changed.notify_all()

    def decide(self, call_id: str, choice: str, arguments: dict | None = None, reason: str | None = None) -> None:
        with self._changed:
            self.decisions[call_id] = {"choice": choice, "arguments": arguments, "reason": reason}
            self._changed.notify_all()

    def answer_form(self, form_id: str, action: str, content: dict | None = None) -> None:
        with self._changed:
            self.answers[form_id] = {"action": action, "content": content}
            self._changed.notify_all()

    def app_request(self, call_id: str, method: str, params: dict[str, Any] | None = None) -> str:
        with self._lock:
            self.app_requests.append((call_id, method, params))
            request_id = f"app-request-{len(self.app_requests)}"
        try:
            if self._apps is None:
                raise ValueError(f"An app may not ask for {method}.")
            result = self._apps(call_id, method, params)
        except Exception as exc:
            self.emit("app_reply", request_id=request_id, error=str(exc))
        else:
            self.emit("app_reply", request_id=request_id, result=result)
        return request_id

    def wait_for(self, check: Callable[[], Any]) -> Any:
        """Blocks the script until ``check()`` is truthy (the person answered or stopped); returns it."""
        with self._changed:
            if not self._changed.wait_for(check, timeout=_PATIENCE):
                raise TimeoutError("the page did not answer")
            return check()
