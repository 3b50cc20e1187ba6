"""The agent's toolset: MCP tools and KNIME workflow tools under model-facing names, run through one dispatcher.

Layer: core, between the agent loop (above) and :class:`Dispatcher` (below). :class:`AgentToolset` offers every tool
under a name a model accepts (``[a-zA-Z0-9_-]{1,64}``, unique across servers and workflow tools, mapped back exactly
by :class:`ToolNameMap`), runs the tool calls of one model message concurrently up to a limit, and answers each call
with a tool message in call order. Calls of a tool that may write (not concurrency-safe by its annotations, the Tool
Caller's rule) run one at a time per server: a server that reads, changes and writes back one store loses the changes
of overlapping calls while each reports success. Failures of any kind (unknown tool, malformed or invalid arguments,
timeouts, exceptions, ``isError`` results) become error tool messages the model can recover from; whether they also
stop the run is the agent's policy. Every result, and every tool's description, is fenced as untrusted data; images go
to the model as image content, within the output cap (:mod:`knime_mcp.agent.result_rendering` turns a result into text
and images). Every call becomes an entry of the tool-call log (:mod:`knime_mcp.agent.call_log`, re-exported here).
What the model is offered is :class:`~knime_mcp.agent.tool_offer.ToolOffer`'s: every tool when they fit the tool
budget, else a search tool, the pinned tools and the tools found.

With a :class:`~knime_mcp.agent.data.DataRepository`, the records in an MCP result's structured content (a JSON array of
objects, or an object holding one) also become a table of the repository, so a later workflow tool can take it. The
tables a call added (its records, or a workflow tool's outputs) are named by id in a note placed after the capped tool
output, so that no output is long enough to hide them. KNIME workflow tools are adapted in
:mod:`knime_mcp.agent.workflow` (re-exported here).

    toolset = AgentToolset(tools, Dispatcher(pool), max_concurrency=4)
    model = model.bind_tools(toolset.specs)
    turn = await toolset.execute(ai_message, turn=1)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from knime_mcp.agent.app_reads import AppReads
from knime_mcp.agent.approval_gate import NONE_ASKED, ApprovalGate, AskedCall, denial, edited_note
from knime_mcp.agent.call_log import ToolCallLogEntry, tools_changed_entry
from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.data import DataRepository, DataTable, collect_call_tables, update_note
from knime_mcp.agent.result_rendering import images_message, render_result
from knime_mcp.agent.tool_offer import SEARCH_KIND, ToolOffer
from knime_mcp.agent.workflow import WORKFLOW_EXECUTION_HINTS, workflow_tools
from knime_mcp.calls.dispatch import CallOutcome, CallRecord, CallStatus, Dispatcher, LocalTool
from knime_mcp.errors import McpToolError, ToolCallError, scrub
from knime_mcp.redaction import redact, redact_text
from knime_mcp.tools.fences import between_fences, new_fence
from knime_mcp.tools.results import ImagePart, ToolResult
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, cap_text

if TYPE_CHECKING:
    from knime_mcp.agent.approval import ApprovalRecord, ApprovalRequest, Decision
    from knime_mcp.agent.tool_changes import ToolWatch
    from knime_mcp.config import ServerSpec

__all__ = [
    "WORKFLOW_EXECUTION_HINTS",
    "AgentToolset",
    "ToolHooks",
    "ToolTurn",
    "workflow_tools",
]

logger = logging.getLogger(__name__)


class ToolTurn(NamedTuple):
    """The replies to one model message: tool messages in call order (plus one message with their images), and the
    errors of the calls that failed, for the agent's fail-fast policy."""

    messages: list[BaseMessage]
    errors: list[McpToolError]
    awaiting: Sequence[ApprovalRequest] = ()
    """The calls awaiting approval: then no call of the message ran, and ``messages`` is empty."""


class ToolHooks(Protocol):
    """Hears each tool call as it starts and as it ends, for a person watching (the chat)."""

    def started(
        self, turn: int, call_id: str, tool: str, origin: MCPTool | LocalTool | None, arguments: dict[str, Any]
    ) -> None:
        """``origin``: the tool called, None for a name no tool has."""

    def ended(self, entry: ToolCallLogEntry, result: ToolResult | None) -> None: ...


class _Call(NamedTuple):
    id: str
    name: str
    arguments: dict[str, Any]
    problem: str | None
    """Why the call cannot run as sent (malformed arguments), or None."""


class _Reply(NamedTuple):
    entry: ToolCallLogEntry
    result: ToolResult | None
    error: McpToolError | None
    note: str | None = None
    """Tells the model about tables the call added to the data repository."""
    said: str | None = None
    """Tells the model, before the tool's output, that the call ran with arguments a person edited."""


class AgentToolset:
    """Tools under model-facing names, and the one way the agent runs them; keeps the run's tool-call log."""

    def __init__(
        self,
        tools: Sequence[MCPTool | LocalTool],
        dispatcher: Dispatcher,
        *,
        max_concurrency: int,
        output_cap: int = DEFAULT_LIMIT_BYTES,
        data: DataRepository | None = None,
        secrets: Collection[str] = (),
        watch: ToolWatch | None = None,
        hooks: ToolHooks | None = None,
        approvals: ApprovalGate | None = None,
        budget: ToolBudget | None = None,
        withheld: Mapping[str, str] | None = None,
        hints: bool = False,
    ) -> None:
        """``watch``: follows the servers' tool list changes after each model message's calls; ``approvals``: asks
        before the calls its policy names; ``budget``: how many tools the model is offered before it searches;
        ``withheld``: why each tool left out for a permission not granted may not be called, by its name;
        ``hints``: tell the model each tool's hints (a person's expected time and cost) in its description."""
        self._withheld = dict(withheld or {})
        self._dispatcher = dispatcher
        self._approvals = approvals
        self.awaiting: list[ApprovalRequest] = []
        """The calls the run stopped at, awaiting approval."""
        self._hooks = hooks
        self._watch = watch
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self._writing: dict[ServerSpec, anyio.Lock] = {}
        """One lock per server for the calls of its tools that may write."""
        self._fence = new_fence()
        self._tools = list(tools)
        self._offer = ToolOffer(self._tools, self._fence, budget or ToolBudget(), hints=hints)
        """Every tool by its model-facing name, and what the model is offered of them."""
        self.warnings = self._offer.warnings
        """The pinned tools over the tool budget, for a node warning."""
        self._output_cap = output_cap
        self._data = data
        self._secrets = tuple(secrets)
        """Secret values the run resolved: a server may echo them (in a result, an error), and they must reach
        neither the model nor the log."""
        self.log: list[ToolCallLogEntry] = []
        self.apps = AppReads(dispatcher.read_app)
        """The MCP Apps of the tools called, each read once after its tool's first successful call; their warnings
        (an app that could not be read) are the run's too."""

    @property
    def specs(self) -> list[dict[str, Any]]:
        """The offered tools in OpenAI function format, for ``bind_tools``; parameters are each tool's parameter
        schema, the description is fenced as tool output is."""
        return self._offer.specs

    async def execute(self, message: AIMessage, turn: int) -> ToolTurn:
        """Run the message's tool calls, at most ``max_concurrency`` at once, and reply to each in call order."""
        calls = _calls(message)
        approvals = NONE_ASKED if self._approvals is None else await self._approvals.ask(self._callable(calls))
        if approvals.awaiting:
            self.awaiting = approvals.awaiting
            self.log.extend(approvals.awaiting_entries(turn))
            return ToolTurn([], [], approvals.awaiting)
        replies: list[_Reply | None] = [None] * len(calls)

        async def run(index: int, call: _Call) -> None:
            # The server's write lock before a slot: a call waiting for the lock holds no slot a read could use.
            async with self._turn(call), self._limiter:
                if self._hooks is not None:
                    origin = self._offer.resolve(call.name) if call.name in self._offer else None
                    self._hooks.started(turn, call.id, call.name, origin, call.arguments)
                replies[index] = reply = await self._run(call, turn, approvals.decided.get(index))
                if self._hooks is not None:
                    self._hooks.ended(self._scrubbed(reply.entry), reply.result)

        async with anyio.create_task_group() as group:
            for index, call in enumerate(calls):
                group.start_soon(run, index, call)
        done = [reply for reply in replies if reply is not None]
        self.log.extend(self._scrubbed(reply.entry) for reply in done)
        self._offer.called([call.name for call in calls])
        await self._follow_tool_changes(turn, self._mcp_tools(calls))
        # A denial is a person's decision for the model to work with, not a failure that stops the run.
        errors = [reply.error for reply in done if reply.error is not None and reply.entry.status != "denied"]
        return ToolTurn(self._messages(calls, done), errors)

    def _turn(self, call: _Call) -> AbstractAsyncContextManager[object]:
        """What a call waits for before it runs: its server's write lock if its tool may write, else nothing."""
        tool = self._offer.resolve(call.name) if call.name in self._offer else None
        if isinstance(tool, MCPTool) and not tool.annotations.concurrency_safe:
            return self._writing.setdefault(tool.server, anyio.Lock())
        return nullcontext()

    def _callable(self, calls: list[_Call]) -> list[AskedCall]:
        """The calls that can be made as sent, with their places in the message, to ask about: the others are
        refused anyway, and a tool search reaches nothing outside this process (it reads the tools' index)."""
        named = [(place, call) for place, call in enumerate(calls) if call.problem is None and call.name in self._offer]
        tools = [(place, call, self._offer.resolve(call.name)) for place, call in named]
        return [
            (place, call.id, call.name, tool, call.arguments)
            for place, call, tool in tools
            if not (isinstance(tool, LocalTool) and tool.kind == SEARCH_KIND)
        ]

    async def _run(self, call: _Call, turn: int, approval: tuple[Decision, ApprovalRecord] | None = None) -> _Reply:
        started = time.perf_counter()
        try:
            tool = self._offer.resolve(call.name)
        except ToolCallError as exc:
            if (reason := self._withheld.get(call.name)) is not None:  # a tool not granted, called by its name
                withheld = ToolCallError(f"The call was not made: {reason}.")
                return self._refused(call, turn, "unknown", None, "blocked", withheld, started)
            return self._refused(call, turn, "unknown", None, "unknown_tool", exc, started)
        server = tool.server.display_name if isinstance(tool, MCPTool) else None
        kind = tool.kind
        if call.problem is not None:
            error = ToolCallError(
                f"The arguments of the call of {call.name!r} are not a JSON object: {call.problem}",
                hint="Call the tool again with its arguments as one valid JSON object.",
            )
            return self._refused(call, turn, kind, server, "invalid_arguments", error, started)
        if approval is not None:
            decision, record = approval
            if decision.choice == "deny":
                reply = self._refused(call, turn, kind, server, "denied", denial(call.name, decision), started)
                return reply._replace(entry=replace(reply.entry, approval=record))
            said = None if decision.arguments is None else edited_note(decision.arguments)
            call = call._replace(arguments=call.arguments if decision.arguments is None else decision.arguments)
        with collect_call_tables() as added:
            outcome = await self._dispatcher.call(tool, call.arguments)
        reply = _reply(call, turn, outcome)
        if approval is not None:
            reply = reply._replace(entry=replace(reply.entry, approval=record), said=said)
        if isinstance(tool, MCPTool):
            added += self._records(call, reply)
            if tool.app_uri is not None:
                reply = await self._with_app(tool, reply)
        # The note goes after the output cap (see _fenced): however long the output, the new tables' ids get through.
        return reply._replace(note=update_note(added)) if added and reply.result is not None else reply

    async def _with_app(self, tool: MCPTool, reply: _Reply) -> _Reply:
        """The reply with the tool's app in its log entry: read after the tool's first successful call, as read
        for any later call."""
        app = await self.apps.app(tool) if reply.entry.status == "ok" else self.apps.known(tool)
        entry = replace(reply.entry, app_uri=tool.app_uri, app_bytes=None if app is None else app.size)
        return reply._replace(entry=entry)

    def _mcp_tools(self, calls: list[_Call]) -> list[MCPTool]:
        """The MCP tools the calls reached."""
        tools = [self._offer.resolve(call.name) for call in calls if call.name in self._offer]
        return [tool for tool in tools if isinstance(tool, MCPTool)]

    async def follow_tool_changes(self) -> None:
        """Before a chat's next turn: offer what the servers changed since the last look (said so, or listings past
        their lifetime), noted in the log as turn 0."""
        await self._follow_tool_changes(0, [])

    async def _follow_tool_changes(self, turn: int, called: list[MCPTool]) -> None:
        """Offer the new tool sets of the servers that said their tools changed, or whose ``called`` tools may have
        changed them (:mod:`knime_mcp.agent.tool_changes` says when), and note each change in the log."""
        if self._watch is None:
            return
        self._tools, changes = await self._watch.follow(self._tools, called)
        if changes:
            self._offer.update(self._tools)
            self.log.extend(tools_changed_entry(change, turn) for change in changes)

    def _records(self, call: _Call, reply: _Reply) -> list[DataTable]:
        """With a data repository: the records of a successful MCP result as a new table."""
        result = reply.result
        if self._data is None or result is None or result.is_error or reply.error is not None:
            return []
        from knime_mcp.tools.records import records_table

        table = records_table(result.structured)
        if table is None:
            return []
        description = f"The records in the structured result of MCP tool {call.name!r} (call {call.id})."
        return [self._data.add(table, name=f"{call.name} result", description=description)]

    @staticmethod
    def _refused(
        call: _Call, turn: int, kind: str, server: str | None, status: CallStatus, error: ToolCallError, started: float
    ) -> _Reply:
        """A call that never reached a tool."""
        record = CallRecord(
            tool=call.name,
            kind=kind,
            server=server,
            arguments=redact(call.arguments),
            status=status,
            error=str(error),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        entry = ToolCallLogEntry(turn=turn, tool_call_id=call.id, tool=call.name, record=record, result=None)
        logger.info("Tool call %s of %r refused (%s): %s", call.id, call.name, status, error)
        return _Reply(entry, None, error)

    def _messages(self, calls: list[_Call], replies: list[_Reply]) -> list[BaseMessage]:
        messages: list[BaseMessage] = []
        images: list[tuple[str, ImagePart]] = []
        for call, reply in zip(calls, replies, strict=True):
            messages.append(self._tool_message(call, reply, images))
        if images:
            messages.append(images_message(images))
        return messages

    def _tool_message(self, call: _Call, reply: _Reply, images: list[tuple[str, ImagePart]]) -> ToolMessage:
        """The reply to one call; its images are added to ``images`` and referred to by number."""
        if reply.result is None:
            text = f"The tool call failed ({reply.entry.status}).\n{self._fenced(call.name, str(reply.error))}"
        else:
            attached: list[ImagePart] = []
            text = self._fenced(call.name, render_result(reply.result, attached, len(images)), reply.note)
            images += [(call.name, image) for image in attached]
            if reply.result.is_error:
                said = reply.result.error_text if reply.result.mismatch else "The tool reported an error."
                text = f"{said}\n{text}"
        text = f"{reply.said}\n{text}" if reply.said else text
        status = "success" if reply.error is None else "error"
        return ToolMessage(text, tool_call_id=call.id, name=call.name, status=status)

    def _scrubbed(self, entry: ToolCallLogEntry) -> ToolCallLogEntry:
        if not self._secrets:
            return entry
        record = replace(entry.record, error=entry.record.error and scrub(entry.record.error, self._secrets))
        return replace(entry, record=record, result=entry.result and scrub(entry.result, self._secrets))

    def _fenced(self, tool: str, text: str, note: str | None = None) -> str:
        """Tool output as data: at most ``output_cap`` bytes, then the data repository note (its column names come
        from tool output too), between tags carrying this run's random fence value (which tool output cannot forge)."""
        text, _ = cap_text(scrub(text, self._secrets), self._output_cap)
        return between_fences("tool-output", f"{text}\n\n{note}" if note else text, self._fence, tool=tool)


def _calls(message: AIMessage) -> list[_Call]:
    """Valid and malformed tool calls alike (the agent has given each an id)."""
    calls = [_Call(str(call["id"]), call["name"], dict(call["args"]), None) for call in message.tool_calls]
    for call in message.invalid_tool_calls:
        problem = call.get("error") or f"cannot parse {redact_text(str(call.get('args')))[:200]!r}"
        calls.append(_Call(str(call["id"]), call.get("name") or "", {}, redact_text(problem)))
    return calls


def _reply(call: _Call, turn: int, outcome: CallOutcome) -> _Reply:
    record = outcome.record
    result = outcome.result.to_json() if outcome.result is not None else None
    entry = ToolCallLogEntry(turn=turn, tool_call_id=call.id, tool=call.name, record=record, result=result)
    error: McpToolError | None = None
    try:
        outcome.raise_for_error()
    except McpToolError as exc:
        error = exc
        logger.info("Tool call %s of %r failed (%s): %s", call.id, call.name, record.status, record.error)
    return _Reply(entry, outcome.result, error)
