"""What an app (MCP Apps) in the chat asks of it: its view, its server's tools and resources, a message.

Layer: core (agent), beside :mod:`knime_mcp.agent.chat_session`, which takes the requests from the chat page's data
service (``app_request``) and runs each as a task on its event loop; the answer is an ``app_reply`` event
(``request_id`` and ``result``, or ``error``), as a data-service call must not wait for a person's approval.

An app is the page a server's tool named (:attr:`~knime_mcp.tools.tool.MCPTool.app_uri`), shown under one call of
that tool (``call_id``). It reaches its own server only, and only as the model would:

- ``view``: its document (:mod:`knime_mcp.mcp.app_resource`: the app's HTML with its vetted policy first), the call's
  arguments and its result (:mod:`knime_mcp.agent.app_calls`; null while the call runs).
- ``tools/call``: a tool of its server (listed through the chat's session to it, app-only tools included; a tool of
  the tools table is used as the table has it); the tool policy, the approval policy and *Allow for this session* are
  the model's, its ``approval`` and ``tool_start`` events carry ``by_app`` (the app's name), and it is logged like a
  model's call, as turn 0.
- ``resources/read`` and ``resources/list``: of its server.
- ``ui/message``: a turn with the app's text (:meth:`ChatSession.app_request` starts it, as ``send`` does).

Nothing of a server's settings (its command, headers, credentials) is in any answer: answers hold what the server
sent, errors say what happened.
"""

from __future__ import annotations

import base64
import itertools
import logging
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from knime_mcp.agent.app_calls import AppCall, call_tool_result
from knime_mcp.agent.approval import ApprovalRecord, Decision
from knime_mcp.agent.approval_gate import denial
from knime_mcp.agent.call_log import ToolCallLogEntry
from knime_mcp.calls.dispatch import CallRecord
from knime_mcp.errors import McpToolError, ResourceError, ToolCallError, scrub
from knime_mcp.mcp.app_resource import MAX_APP_BYTES, AppResource
from knime_mcp.redaction import redact
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.agent.approval_gate import ApprovalGate
    from knime_mcp.agent.chat_events import EventLog, TurnEvents
    from knime_mcp.agent.loop import AgentParts
    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.resources import MCPResource, ResourceContent
    from knime_mcp.tools.policy import ToolPolicy
    from knime_mcp.tools.results import ToolResult

__all__ = ["APP_METHODS", "AppRequests", "message_text"]

logger = logging.getLogger(__name__)

APP_METHODS = ("view", "tools/call", "resources/read", "resources/list", "ui/message")
"""What an app may ask for; anything else is refused."""


class AppRequests:
    """The apps' requests of one chat, answered on its event loop as ``app_reply`` events."""

    def __init__(
        self,
        log: EventLog,
        events: TurnEvents,
        approvals: ApprovalGate,
        policy: ToolPolicy,
        tools: Sequence[MCPTool | LocalTool],
        secrets: Collection[str],
    ) -> None:
        """``approvals``: the gate over the chat's own approver (its *Allow for this session* is the model's);
        ``policy``: the chat's tool policy; ``tools``: the chat's tools, whose form of a tool an app's call uses when
        the table has it."""
        self._log = log
        self._events = events
        self._approvals = approvals
        self._policy = policy
        self._table = [tool for tool in tools if isinstance(tool, MCPTool) and tool.kind == "mcp"]
        self._secrets = tuple(secrets)
        self._parts: AgentParts | None = None
        self._call_ids = itertools.count(1)
        self._by_app: dict[str, str] = {}
        """The apps' calls under way: call id to the app's name, for their ``approval`` events."""
        self._listed: dict[ServerSpec, list[MCPTool]] = {}
        self._scopes: set[anyio.CancelScope] = set()

    def open(self, parts: AgentParts) -> None:
        """The chat's parts, once its sessions are wired."""
        self._parts = parts

    def app_name(self, call_id: str) -> str:
        """The name of the app of call ``call_id``; a :class:`ToolCallError` when the chat has no such app."""
        return self._app(call_id).app_name

    def by_app(self, call_id: str) -> dict[str, str]:
        """``{"by_app": <app name>}`` for a call an app made, else nothing: the fields its events add."""
        name = self._by_app.get(call_id)
        return {"by_app": name} if name else {}

    def cancel(self) -> None:
        """End every request under way (the chat closes)."""
        for scope in list(self._scopes):
            scope.cancel()

    async def answer(self, request_id: str, call_id: str, method: str, params: dict[str, Any]) -> None:
        """Answer one request with an ``app_reply`` event."""
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                result = await self._answer(call_id, method, params)
            except McpToolError as exc:
                self.refuse(request_id, str(exc))
            except Exception as exc:  # the chat goes on; the app hears what broke
                logger.exception("An app's request of the chat failed")
                self.refuse(request_id, f"The app's request failed unexpectedly: {exc}")
            else:
                self._log.add("app_reply", request_id=request_id, result=result)
            finally:
                self._scopes.discard(scope)

    def refuse(self, request_id: str, message: str) -> None:
        self._log.add("app_reply", request_id=request_id, error=scrub(message, self._secrets))

    async def _answer(self, call_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method not in APP_METHODS or method == "ui/message":  # a message is the session's: it starts a turn
            raise ToolCallError(f"An app may not ask for {method}.")
        app = self._app(call_id)
        if method == "view":
            resource = await self._resource(app)
            return {**resource.to_dict(), "input": app.arguments, "result": app.result}
        if method == "tools/call":
            return await self._call(app, params)
        client = await self._client(app.tool.server)
        if method == "resources/list":
            return {"resources": [_wire_resource(entry) for entry in await client.list_resources()]}
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise ResourceError("The app asked to read a resource without its URI.", server=app.server)
        return {"contents": [_wire_contents(item) for item in await client.read_resource(uri, max_bytes=MAX_APP_BYTES)]}

    def _app(self, call_id: str) -> AppCall:
        if (app := self._events.apps.get(call_id)) is None:
            raise ToolCallError(
                f"The chat shows no app for the call {call_id!r}.",
                hint="Only the apps of the chat's last 50 calls of tools with an app can ask the chat for something.",
            )
        return app

    async def _client(self, server: ServerSpec) -> McpClient:
        assert self._parts is not None
        return await self._parts.pool.client(server)

    async def _resource(self, app: AppCall) -> AppResource:
        """The app's document, read once per server and URI for the whole chat (the toolset's reads, which the
        tool-call log's *App bytes* come from)."""
        assert self._parts is not None
        return await self._parts.toolset.apps.read(app.tool)

    async def _call(self, app: AppCall, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ToolCallError("The app's tool call needs a tool name and its arguments as a JSON object.")
        tool = await self._own_tool(app, name)
        call_id = f"app-call-{next(self._call_ids)}"
        self._by_app[call_id] = app.app_name
        try:
            return await self._run(call_id, tool, arguments, app.app_name)
        finally:
            self._by_app.pop(call_id, None)

    async def _own_tool(self, app: AppCall, name: str) -> MCPTool:
        """The tool ``name`` of the app's server: the tools table's, else its server's listing (listed again when
        the name is new: the server may have added it)."""
        server = app.tool.server
        for tool in self._table:
            if tool.server == server and tool.tool_name == name:
                return tool
        for fresh in (False, True):
            if fresh or server not in self._listed:
                listed = await (await self._client(server)).list_tools()
                # The chat's session to the server is keyed by the spec it was opened with: the app's tool's.
                self._listed[server] = [tool.with_changes(server=server) for tool in listed]
            if found := next((tool for tool in self._listed[server] if tool.tool_name == name), None):
                return found
        raise ToolCallError(
            f"The app of {app.tool.tool_name} may only call tools of {app.server}; it asked for {name}."
        )

    async def _run(self, call_id: str, tool: MCPTool, arguments: dict[str, Any], by_app: str) -> dict[str, Any]:
        """The call as the model's runs: asked about first when the approval policy names it, then made."""
        assert self._parts is not None
        decision, approval = await self._decision(call_id, tool, arguments)
        self._events.started(0, call_id, tool.name, tool, arguments, by_app=by_app)
        if decision is not None and decision.choice == "deny":
            error = ToolCallError(denial(tool.name, decision).message)  # without the model's hint
            record = CallRecord(
                tool=tool.name, kind=tool.kind, server=tool.server.display_name, arguments=redact(arguments),
                status="denied", error=str(error), duration_ms=0.0,
            )  # fmt: skip
            self._logged(_entry(call_id, tool, record, None, approval), None)
            raise error
        if decision is not None and decision.arguments is not None:
            arguments = decision.arguments
        outcome = await self._parts.dispatcher.call(tool, arguments)
        self._logged(_entry(call_id, tool, outcome.record, outcome.result, approval), outcome.result)
        if outcome.result is None:
            raise ToolCallError(outcome.record.error or f"The call of {tool.name!r} failed.")
        return call_tool_result(outcome.result.masked(self._secrets))

    async def _decision(
        self, call_id: str, tool: MCPTool, arguments: dict[str, Any]
    ) -> tuple[Decision | None, ApprovalRecord | None]:
        """The person's decision when the approval policy names the tool; a call the tool policy blocks is not asked
        about (the dispatcher refuses it, and the log says why)."""
        if self._policy.check(tool) is not None:
            return None, None
        approvals = await self._approvals.ask([(0, call_id, tool.name, tool, arguments)])
        if approvals.awaiting:  # nobody could answer: as denied
            return Decision("deny", reason="Nobody could approve it."), ApprovalRecord("awaiting")
        return approvals.decided.get(0, (None, None))

    def _logged(self, entry: ToolCallLogEntry, result: ToolResult | None) -> None:
        """The call's end: its ``tool_end`` event and its entry in the tool-call log, the run's secrets masked."""
        assert self._parts is not None
        if self._secrets:
            record = replace(entry.record, error=entry.record.error and scrub(entry.record.error, self._secrets))
            entry = replace(entry, record=record, result=entry.result and scrub(entry.result, self._secrets))
        self._events.ended(entry, result)
        self._parts.toolset.log.append(entry)


def _entry(
    call_id: str, tool: MCPTool, record: CallRecord, result: ToolResult | None, approval: ApprovalRecord | None
) -> ToolCallLogEntry:
    """The tool-call log's entry of an app's call: turn 0, as the calls made outside the model's turns."""
    json = result.to_json() if result is not None else None
    return ToolCallLogEntry(turn=0, tool_call_id=call_id, tool=tool.name, record=record, result=json, approval=approval)


def message_text(params: dict[str, Any] | None) -> str:
    """The text of an app's ``ui/message``: its text parts, joined; a :class:`ToolCallError` for anything else."""
    params = params or {}
    content = params.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str)]
    if params.get("role", "user") != "user" or not "".join(texts).strip():
        raise ToolCallError("The app's message must be the person's (role user) and hold text.")
    return "\n".join(texts)


def _wire_resource(entry: MCPResource) -> dict[str, Any]:
    """A listed resource as ``resources/list`` writes it."""
    fields = {"title": entry.title, "description": entry.description, "mimeType": entry.mime_type, "size": entry.size}
    return {"uri": entry.uri, "name": entry.name, **{key: value for key, value in fields.items() if value is not None}}


def _wire_contents(item: ResourceContent) -> dict[str, Any]:
    """One item of a read as ``resources/read`` writes it: text, or binary contents as base64."""
    wire: dict[str, Any] = {"uri": item.uri, **({"mimeType": item.mime_type} if item.mime_type else {})}
    if item.data is None:
        return {**wire, "text": item.text or ""}
    return {**wire, "blob": base64.b64encode(item.data).decode("ascii")}
