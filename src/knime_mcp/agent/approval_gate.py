"""The toolset's side of approval before a call: ask about the calls of one model message before any of them runs,
and turn the answers into what the model and the tool-call log see.

Layer: core (agent), between :mod:`knime_mcp.agent.toolset` (above), which runs the calls, and
:mod:`knime_mcp.agent.approval` (the policy, the request, the decision, the approver). All calls of a message are
decided before any runs, in call order: when one is left awaiting approval (nobody can answer now), none of the
message's calls runs, so the conversation ends with that message and every one of its calls unanswered, and the run
that resumes it makes each call exactly once. A decision is kept by the call's place in the message, not by its id:
calls that share an id (a conversation from data may hold such) are each decided on their own.

    gate = ApprovalGate(ApprovalPolicy(destructive=True), approver)
    approvals = await gate.ask([(position, call_id, name, tool, arguments)])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from knime_mcp.agent.approval import (
    ApprovalPolicy,
    ApprovalRecord,
    ApprovalRequest,
    Approver,
    Decision,
    SessionApprover,
)
from knime_mcp.agent.call_log import ToolCallLogEntry
from knime_mcp.calls.dispatch import CallRecord, LocalTool
from knime_mcp.errors import ToolCallError
from knime_mcp.redaction import redact
from knime_mcp.tools.annotations import ToolAnnotations
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.dispatch import CallStatus

__all__ = ["ApprovalGate", "Approvals", "AskedCall", "approval_request", "awaiting_entry", "denial", "edited_note"]

AskedCall = tuple[int, str, str, MCPTool | LocalTool, dict[str, Any]]
"""A call the gate may ask about: its place among the message's calls, id, model-facing name, tool and arguments."""


class Approvals(NamedTuple):
    """The answers about one message's calls: each decided call's decision as the log keeps it, by the call's
    place in the message, and the requests nobody could answer now."""

    decided: dict[int, tuple[Decision, ApprovalRecord]]
    awaiting: list[ApprovalRequest]
    asked: list[tuple[int, ApprovalRequest]]
    """Every call asked about, decided or not, with its place in the message."""

    def awaiting_entries(self, turn: int) -> list[ToolCallLogEntry]:
        """The log's entries when the run stops: every call asked about, with its decision if it got one."""
        return [awaiting_entry(turn, asked, self.decided.get(place, (None, None))[1]) for place, asked in self.asked]


NONE_ASKED = Approvals({}, [], [])


class ApprovalGate:
    """Asks ``approver`` about the calls ``policy`` names; remembers *Allow for this session* (wrapping the
    approver in a :class:`SessionApprover` unless it is one). Without an approver nobody can answer: every call the
    policy names awaits approval."""

    def __init__(self, policy: ApprovalPolicy, approver: Approver | None) -> None:
        self._policy = policy
        self._approver = approver if isinstance(approver, SessionApprover) else SessionApprover(approver)

    async def ask(self, calls: Sequence[AskedCall]) -> Approvals:
        """Ask about each call the policy names, in call order."""
        if not self._policy.active:
            return NONE_ASKED
        decided: dict[int, tuple[Decision, ApprovalRecord]] = {}
        awaiting: list[ApprovalRequest] = []
        asked: list[tuple[int, ApprovalRequest]] = []
        for place, call_id, name, tool, arguments in calls:
            if not self._policy.needs_approval(tool):
                continue
            request = approval_request(call_id, name, tool, arguments)
            asked.append((place, request))
            decision = await self._approver.decide(request)
            if decision is None:
                awaiting.append(request)
            else:
                decided[place] = (decision, ApprovalRecord(decision.choice))
        return Approvals(decided, awaiting, asked)


def approval_request(call_id: str, name: str, tool: MCPTool | LocalTool, arguments: dict[str, Any]) -> ApprovalRequest:
    """What a person is shown about a call; a workflow tool has the specification's hints of an unannotated tool."""
    hints = tool.annotations if isinstance(tool, MCPTool) else ToolAnnotations()
    server = tool.server.display_name if isinstance(tool, MCPTool) else ""
    return ApprovalRequest(call_id, name, server, tool.kind, asdict(hints), dict(arguments))


def denial(name: str, decision: Decision) -> ToolCallError:
    """What the model is told about a denied call: a tool error with the person's reason."""
    reason = f" Their reason: {decision.reason.strip()}" if decision.reason and decision.reason.strip() else ""
    return ToolCallError(
        f"The call of {name!r} was not made: the person approving tool calls denied it.{reason}",
        hint="Do not call it again with the same arguments; answer without it, or ask the user how to go on.",
    )


def edited_note(arguments: dict[str, Any]) -> str:
    """Tells the model that the call ran with the arguments the person set, not the ones it asked for."""
    edited = json.dumps(redact(arguments), ensure_ascii=False, default=str)
    return f"The person approving the call changed its arguments; it ran with {edited}."


def awaiting_entry(turn: int, request: ApprovalRequest, approval: ApprovalRecord | None = None) -> ToolCallLogEntry:
    """The log's entry for a call not made because the run stopped awaiting approval (its own, or a sibling's)."""
    status: CallStatus = "awaiting_approval"
    record = CallRecord(
        tool=request.tool, kind=request.kind, server=request.server or None, arguments=redact(request.arguments),
        status=status, error=None, duration_ms=0.0,
    )  # fmt: skip
    entry = ToolCallLogEntry(turn=turn, tool_call_id=request.call_id, tool=request.tool, record=record, result=None)
    return replace(entry, approval=approval or ApprovalRecord("awaiting"))
