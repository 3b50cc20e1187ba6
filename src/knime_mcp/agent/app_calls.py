"""The chat's calls of tools that have an app (MCP Apps): what each app's view needs, kept for the page to ask.

Layer: core (agent), below :mod:`knime_mcp.agent.chat_events`, whose ``tool_start`` of such a call names the app
(``"app": {"uri", "server"}``) and which records here the call's arguments and, once it ended, its result, and below
:mod:`knime_mcp.agent.app_requests`, which answers an app's ``view`` from it. A result is kept as the MCP
``CallToolResult`` the app expects (content parts in wire shape, ``structuredContent``, ``isError``). Only the last
:data:`APP_CALLS_KEPT` calls are kept: a long chat's early apps are gone, and say so.

    calls = AppCalls()
    calls.started("c1", tool, {"month": 3})   # {"uri": "ui://budget/app.html", "server": "budget"}
    calls.ended("c1", result, None, secrets)
    calls.get("c1").result                   # {"content": [...], "structuredContent": {...}, "isError": False}
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, assert_never

from knime_mcp.errors import scrub
from knime_mcp.tools.results import (
    AudioPart,
    ContentPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
)
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.dispatch import LocalTool

__all__ = ["APP_CALLS_KEPT", "AppCall", "AppCalls", "call_tool_result", "text_result"]

APP_CALLS_KEPT = 50
"""How many calls with an app the chat keeps for their views."""


@dataclass(kw_only=True)
class AppCall:
    """A call of a tool that has an app: the app's view shows the call's input and result."""

    tool: MCPTool
    uri: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    """The call's ``CallToolResult`` in wire shape; None while it runs."""

    @property
    def server(self) -> str:
        return self.tool.server.display_name

    @property
    def app_name(self) -> str:
        """How the chat names the app to a person, e.g. ``Get Budget Data app (budget)``."""
        return f"{self.tool.title or self.tool.tool_name} app ({self.server})"

    def event(self) -> dict[str, str]:
        """The ``app`` field of the call's ``tool_start``."""
        return {"uri": self.uri, "server": self.server}


class AppCalls:
    """The last :data:`APP_CALLS_KEPT` calls with an app, by call id; used on the chat's event loop only."""

    def __init__(self, kept: int = APP_CALLS_KEPT) -> None:
        self._kept = kept
        self._calls: OrderedDict[str, AppCall] = OrderedDict()

    def started(
        self, call_id: str, origin: MCPTool | LocalTool | None, arguments: dict[str, Any]
    ) -> dict[str, str] | None:
        """Keep the call if its tool has an app; the ``app`` field of its ``tool_start``, else None."""
        if not isinstance(origin, MCPTool) or origin.app_uri is None:
            return None
        call = self._calls[call_id] = AppCall(tool=origin, uri=origin.app_uri, arguments=dict(arguments))
        self._calls.move_to_end(call_id)
        while len(self._calls) > self._kept:
            self._calls.popitem(last=False)
        return call.event()

    def ended(self, call_id: str, result: ToolResult | None, error: str | None, secrets: Collection[str]) -> None:
        """The call's result, or its error as an error result (a call that failed before its tool answered)."""
        if call_id in self._calls:
            failed = scrub(error or "The call ended without a result.", secrets)
            self.answered(
                call_id, text_result(failed, True) if result is None else call_tool_result(result.masked(secrets))
            )

    def answered(self, call_id: str, result: dict[str, Any]) -> None:
        """The call's result as a ``CallToolResult``."""
        if (call := self._calls.get(call_id)) is not None:
            call.result = result

    def get(self, call_id: str) -> AppCall | None:
        return self._calls.get(call_id)


def call_tool_result(result: ToolResult) -> dict[str, Any]:
    """``result`` as MCP's ``CallToolResult``, as an app receives it."""
    shown: dict[str, Any] = {"content": [_wire_part(part) for part in result.content], "isError": result.is_error}
    return shown if result.structured is None else {**shown, "structuredContent": result.structured}


def text_result(text: str, is_error: bool) -> dict[str, Any]:
    """A ``CallToolResult`` of one text part: an error's message, or a result the conversation keeps as text only."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _wire_part(part: ContentPart) -> dict[str, Any]:
    """A content part as the protocol writes it (``mimeType``, an embedded resource's ``resource``, the audience in
    ``annotations``)."""
    match part:
        case TextPart():
            wire: dict[str, Any] = {"type": "text", "text": part.text}
        case ImagePart() | AudioPart():
            wire = {"type": part.type, "data": part.data, "mimeType": part.mime_type}
        case ResourceLinkPart():
            wire = {"type": "resource_link", "uri": part.uri, "name": part.name}
            wire |= _set(description=part.description, mimeType=part.mime_type)
        case ResourcePart():
            contents = {"uri": part.uri, **_set(mimeType=part.mime_type, text=part.text, blob=part.blob)}
            wire = {"type": "resource", "resource": contents}
        case _:
            assert_never(part)
    return wire if part.audience is None else {**wire, "annotations": {"audience": list(part.audience)}}


def _set(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}
