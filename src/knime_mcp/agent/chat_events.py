"""The chat's events: what a page or a terminal shows of a conversation as it happens, numbered, JSON-able.

Layer: core (agent), below :mod:`knime_mcp.agent.chat_session`, which writes them from its event loop while a face
(the chat view's data service, ``knime-mcp chat``) reads them from its own thread with :meth:`EventLog.after`.
:class:`TurnEvents` hears the answer stream and is the toolset's :class:`~knime_mcp.agent.toolset.ToolHooks`: it
turns each call's start and end into ``tool_start`` and ``tool_end`` events (arguments redacted, images as PNG data
URLs, secrets scrubbed; a result shows the parts its server meant for the person, not those for the model only)
and keeps the calls in flight, which a stopped turn ends as ``cancelled``; a running call's
progress and an MCP task's status messages come as ``progress`` events.

    log = EventLog()
    log.add("user", text="Hi")
    log.after(0)   # [{"seq": 1, "type": "user", "text": "Hi"}]
"""

from __future__ import annotations

import base64
import contextvars
import threading
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal

from knime_mcp.agent.app_calls import AppCalls, text_result
from knime_mcp.agent.call_log import ToolCallLogEntry
from knime_mcp.calls.dispatch import CallRecord
from knime_mcp.errors import scrub
from knime_mcp.redaction import redact
from knime_mcp.tools.fences import within_fences
from knime_mcp.tools.results import ImagePart
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.conversation import Conversation
    from knime_mcp.tools.results import ToolResult

__all__ = ["STOPPED", "CallTracker", "EventKind", "EventLog", "TurnEvents", "calling_server", "stopped_text"]

EventKind = Literal[
    "user", "assistant_delta", "assistant", "tool_start", "tool_end", "progress", "approval", "form", "sign_in",
    "error", "turn_end", "app_reply",
]  # fmt: skip

STOPPED = "The call was cancelled: the person stopped the turn before it ended."
"""What the model is told of a call a stopped turn cut off or never made; the log and the call's card say more
(:func:`stopped_text`)."""

calling_server: contextvars.ContextVar[str] = contextvars.ContextVar("calling_server", default="")
"""The display name of the server the current tool call goes to: a session opened for the call (and its OAuth
sign-in) runs in a context copied from the call's task, so a sign-in link can name its server."""


class EventLog:
    """Events numbered from 1 in the order they happened; written from one thread, read from any."""

    def __init__(self) -> None:
        self._added = threading.Condition()
        self._events: list[dict[str, Any]] = []

    def add(self, event_type: EventKind, /, **fields: Any) -> dict[str, Any]:
        with self._added:
            event = {"seq": len(self._events) + 1, "type": event_type, **fields}
            self._events.append(event)
            self._added.notify_all()
        return event

    def after(self, seq: int = 0, wait: float | None = None) -> list[dict[str, Any]]:
        """The events numbered above ``seq``; with ``wait``, waiting up to that many seconds for one to come."""
        with self._added:
            if wait:
                self._added.wait_for(lambda: len(self._events) > seq, wait)
            return self._events[max(seq, 0) :]


class _InFlight:
    """A call that started and has not ended yet."""

    def __init__(self, turn: int, call_id: str, tool: str, origin: MCPTool | LocalTool | None, arguments: Any) -> None:
        self.turn, self.call_id, self.tool, self.origin, self.arguments = turn, call_id, tool, origin, arguments
        self.started = time.perf_counter()

    def stopped_entry(self) -> ToolCallLogEntry:
        """The log entry of this call, cut off by a stop."""
        record = CallRecord(
            tool=self.tool,
            kind=self.origin.kind if self.origin is not None else "unknown",
            server=_server(self.origin) or None,
            arguments=redact(self.arguments),
            status="cancelled",
            error=stopped_text(self.origin),
            duration_ms=round((time.perf_counter() - self.started) * 1000, 3),
        )
        return ToolCallLogEntry(turn=self.turn, tool_call_id=self.call_id, tool=self.tool, record=record, result=None)


class CallTracker:
    """As the toolset's hooks, the calls of a turn: those under way and those ended, so that a stop (the chat's,
    Ctrl-C in ``knime-mcp agent``) can end the ones it cut off and answer every call of the model's last message.
    Alone, for a run that nobody watches call by call; :class:`TurnEvents` adds the events a person sees."""

    def __init__(self) -> None:
        self._in_flight: dict[str, _InFlight] = {}
        self.finished: dict[str, ToolCallLogEntry] = {}
        """The entries of the calls that ended in the current turn, by call id."""

    def new_turn(self) -> None:
        self.finished.clear()

    def started(
        self, turn: int, call_id: str, tool: str, origin: MCPTool | LocalTool | None, arguments: dict[str, Any]
    ) -> None:
        self._in_flight[call_id] = _InFlight(turn, call_id, tool, origin, arguments)

    def ended(self, entry: ToolCallLogEntry, result: ToolResult | None) -> None:
        self._in_flight.pop(entry.tool_call_id, None)
        self.finished[entry.tool_call_id] = entry

    def stop(self) -> list[ToolCallLogEntry]:
        """End the calls in flight as cancelled; their log entries."""
        entries = [call.stopped_entry() for call in self._in_flight.values()]
        self._in_flight.clear()
        self.finished.update((entry.tool_call_id, entry) for entry in entries)
        return entries

    def settle_stopped(self, conversation: Conversation, log: list[ToolCallLogEntry]) -> None:
        """After a stop: the calls cut off end as cancelled, and every call of the last model message gets a reply (a
        model refuses a conversation with a call left unanswered) and an entry in ``log``."""
        from langchain_core.messages import AIMessage, ToolMessage

        self.stop()
        messages = conversation.new_messages
        asked = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
        if asked is None:
            return
        message = messages[asked]
        assert isinstance(message, AIMessage)
        answered = {m.tool_call_id for m in messages[asked + 1 :] if isinstance(m, ToolMessage)}
        logged = {entry.tool_call_id for entry in log}
        for call in [*message.tool_calls, *message.invalid_tool_calls]:
            call_id = str(call["id"])
            if call_id not in answered:
                conversation.append(
                    ToolMessage(STOPPED, tool_call_id=call_id, name=call.get("name") or "", status="error")
                )
            if call_id not in logged and (entry := self.finished.get(call_id)) is not None:
                log.append(entry)


class TurnEvents(CallTracker):
    """A turn's events as they happen: the answer's text as it streams (``assistant_delta``, then the whole as
    ``assistant`` before the next tool calls start and at the end), and each call's start and end, those a stop cut
    off included."""

    def __init__(self, log: EventLog, secrets: Collection[str] = ()) -> None:
        super().__init__()
        self._log = log
        self._secrets = tuple(secrets)
        self._answer: list[str] = []
        self._progress: dict[str, str] = {}
        self.apps = AppCalls()
        """The calls of tools with an app, for the apps' views."""

    def delta(self, text: str) -> None:
        """A piece of the answer, as the model generates it."""
        self._answer.append(text)
        self._log.add("assistant_delta", text=text)

    def answered(self) -> None:
        """The answer streamed so far is whole: an ``assistant`` event with its text (none without text)."""
        text, self._answer = "".join(self._answer), []
        if text:
            self._log.add("assistant", text=text)

    def earlier(self, history: Sequence[BaseMessage], tools: Sequence[MCPTool | LocalTool] = ()) -> None:
        """The conversation so far as the chat's first events, so a page opened again shows it: the person's and the
        assistant's messages, and each answered tool call as an ended card (its server and duration are in the log,
        not the conversation); a call of a tool among ``tools`` (by name) that has an app shows the app again, with
        the reply's text as its result."""
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        replies = {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}
        by_name = {tool.name: tool for tool in tools}
        for message in history:
            if isinstance(message, HumanMessage):
                self._log.add("user", text=message.text)
            elif isinstance(message, AIMessage):
                if message.text:
                    self._log.add("assistant", text=message.text)
                for call in message.tool_calls:
                    call_id = str(call["id"])
                    if (reply := replies.get(call_id)) is None:
                        continue  # a call left unanswered (awaiting approval): the turn to come answers it
                    app = self.apps.started(call_id, by_name.get(call["name"]), call["args"])
                    self._log.add(
                        "tool_start", call_id=call_id, tool=call["name"], server="", kind="",
                        arguments=redact(call["args"]), **({"app": app} if app else {}),
                    )  # fmt: skip
                    text = scrub(within_fences("tool-output", reply.text), self._secrets)
                    self.apps.answered(call_id, text_result(text, reply.status == "error"))
                    self._log.add(
                        "tool_end", call_id=call_id, status="error" if reply.status == "error" else "ok",
                        duration_ms=None, text=text, images=[],
                    )  # fmt: skip

    def new_turn(self) -> None:
        super().new_turn()
        self._answer.clear()
        self._progress.clear()

    def started(
        self,
        turn: int,
        call_id: str,
        tool: str,
        origin: MCPTool | LocalTool | None,
        arguments: dict[str, Any],
        by_app: str | None = None,
    ) -> None:
        """A call starts: the model's (in the turn: its answer so far is whole, and a stop ends the call), or one an
        app made (``by_app``, its name: outside any turn, and its tool's own app is not shown again inside it)."""
        if by_app is None:
            self.answered()
            super().started(turn, call_id, tool, origin, arguments)
        server = _server(origin)
        calling_server.set(server)
        kind = origin.kind if origin is not None else "unknown"
        app = self.apps.started(call_id, origin, arguments) if by_app is None else None
        marks = {"app": app} if app else {"by_app": by_app} if by_app else {}
        self._log.add(
            "tool_start", call_id=call_id, tool=tool, server=server, kind=kind, arguments=redact(arguments), **marks
        )

    def progress(self, tool: str, text: str) -> None:
        """A running MCP call's progress line or task status (``progress``), unless it says again what its tool's
        last one said: a server that repeats itself does not fill the chat."""
        if text and self._progress.get(tool) != text:
            self._progress[tool] = text
            self._log.add("progress", tool=tool, text=text)

    def ended(self, entry: ToolCallLogEntry, result: ToolResult | None) -> None:
        super().ended(entry, result)
        self.apps.ended(entry.tool_call_id, result, entry.error, self._secrets)
        text, images = entry.error or "", []
        if result is not None:
            shown = result.for_audience("user")
            text, images = scrub(_person_text(result, shown), self._secrets), _png_urls(shown)
        self._log.add(
            "tool_end",
            call_id=entry.tool_call_id,
            status=entry.status,
            duration_ms=entry.duration_ms,
            text=text,
            images=images,
        )

    def stop(self) -> list[ToolCallLogEntry]:
        """End the calls in flight as cancelled (a ``tool_end`` each), and drop the answer cut off while it
        streamed (the conversation does not hold it); the calls' log entries."""
        self._answer.clear()
        entries = super().stop()
        for entry in entries:
            self._log.add(
                "tool_end", call_id=entry.tool_call_id, status="cancelled", duration_ms=entry.duration_ms,
                text=entry.error or STOPPED, images=[],
            )  # fmt: skip
        return entries


def stopped_text(origin: MCPTool | LocalTool | None) -> str:
    """What the log and the call's card say of a call a stop cut off: an MCP server was told to stop it (with
    ``notifications/cancelled``, by closing the call's stream on Streamable HTTP at 2026-07-28, or ``tasks/cancel``
    for a task); a workflow tool was only left, as it runs on in KNIME's thread until it ends."""
    if isinstance(origin, MCPTool) and origin.kind == "mcp":
        return f"Cancelled on the server: the person stopped the turn, and {_server(origin)} was told to stop the call."
    if origin is not None and origin.kind == "workflow":
        return "Stopped: the person stopped the turn before the workflow tool ended; its outcome is not used."
    return STOPPED


def _server(origin: MCPTool | LocalTool | None) -> str:
    return origin.server.display_name if isinstance(origin, MCPTool) else ""


def _person_text(result: ToolResult, shown: ToolResult) -> str:
    """The text a person sees of ``result``: the parts for them, and a note on the parts for the model only."""
    hidden = len(result.content) - len(shown.content)
    note = f"[{hidden} part(s) for the assistant only are not shown here; the tool-call log keeps them.]"
    return "\n".join(filter(None, [shown.text, note if hidden else ""]))


def _png_urls(result: ToolResult) -> list[str]:
    """The result's images as PNG data URLs; an image that is no image is left out (its call's text says what
    the server sent, and the log keeps it)."""
    from knime_mcp.tools.images import ImageError, to_png

    urls = []
    for part in result.content:
        if isinstance(part, ImagePart):
            try:
                urls.append("data:image/png;base64," + base64.b64encode(to_png(part)).decode("ascii"))
            except ImageError:
                continue
    return urls
