"""Decisions about calls awaiting approval, read from the *Approval* column of a conversation table: how the batch
Agent Prompter resumes a run that stopped at a call nobody could approve.

Layer: core (agent), below the Agent Prompter node, above :mod:`knime_mcp.agent.approval` and
:mod:`knime_mcp.conversation`. The column (and the optional *Approval Reason*) is added to the conversation table the
node output, on the row of the model's message whose calls await approval: ``approve`` or ``deny`` decides each of
its calls, and a JSON object decides them one by one, by call id: ``{"call_1": "approve", "call_2": {"choice":
"deny", "reason": "..."}}`` (an approval may carry edited ``arguments``). A call without a decision stays pending;
a decision for a call that is not awaiting approval, or by an id several awaiting calls share, is an error, never a
silent no-op or a guess.

    approver = table_approver(history_table, messages)
    run = await run_agent(model, tools, prompt, history=messages, approver=approver, config=config)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.agent.approval import ApprovalRequest, Decision
from knime_mcp.columns import ROW_ID_COLUMN, row_label
from knime_mcp.conversation import TOOL_CALLS, awaiting_message
from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa
    from langchain_core.messages import BaseMessage

__all__ = ["APPROVAL", "APPROVAL_REASON", "TableApprover", "awaiting_note", "table_approver"]

APPROVAL = "Approval"
APPROVAL_REASON = "Approval Reason"
_WORDS = {"approve": "approve", "deny": "deny"}
_HINT = (
    f"In the {APPROVAL!r} column, on the row of the model's message whose calls await approval, write approve or "
    'deny, or a JSON object by call id such as {"call_1": "approve", "call_2": "deny"}.'
)


class TableApprover:
    """An :class:`~knime_mcp.agent.approval.Approver` answering from decisions read earlier; None (the call stays
    pending) for a call without one."""

    def __init__(self, decisions: Mapping[str, Decision]) -> None:
        self._decisions = dict(decisions)

    async def decide(self, request: ApprovalRequest) -> Decision | None:
        return self._decisions.get(request.call_id)


def table_approver(table: pa.Table, messages: Sequence[BaseMessage]) -> TableApprover:
    """The decisions in ``table``'s *Approval* column for the calls of ``messages`` (the table's messages) that
    await approval; none without the column."""
    if APPROVAL not in table.column_names:
        return TableApprover({})
    names = [name for name in (ROW_ID_COLUMN, TOOL_CALLS, APPROVAL, APPROVAL_REASON) if name in table.column_names]
    pending = awaiting_message(messages)
    ids = [str(call["id"]) for call in [*pending.tool_calls, *pending.invalid_tool_calls]] if pending else []
    awaiting = set(ids)
    decisions: dict[str, Decision] = {}
    for number, row in enumerate(table.select(names).to_pylist(), start=1):
        if (value := _text(row.get(APPROVAL))) is None:
            continue
        label = row_label(number, row)
        by_id = value.startswith("{")
        for call_id, decision in _row_decisions(value, _text(row.get(APPROVAL_REASON)), row, label).items():
            if call_id not in awaiting:
                raise ConfigError(
                    f"{label} of the conversation decides about call {call_id!r}, which is not awaiting approval "
                    f"(awaiting: {', '.join(sorted(awaiting)) or 'none'}).",
                    hint=_HINT,
                )
            if by_id and (shared := ids.count(call_id)) > 1:
                raise ConfigError(
                    f"{label} of the conversation decides about call {call_id!r}, an id that {shared} calls "
                    "awaiting approval share, so it cannot say which call it means.",
                    hint="Write approve or deny for all the calls of the message instead.",
                )
            decisions[call_id] = decision
    return TableApprover(decisions)


def awaiting_note(requests: Sequence[ApprovalRequest]) -> str:
    """The node's warning when a run stops awaiting approval: which calls, and how to resume."""
    calls = ", ".join(f"{request.tool} (call {request.call_id})" for request in requests)
    return (
        f"The run stopped with calls awaiting approval: {calls}. To resume, feed the conversation back with an "
        f"{APPROVAL!r} column holding approve or deny on its last row (and optionally an {APPROVAL_REASON!r})."
    )


def _row_decisions(value: str, reason: str | None, row: Mapping[str, Any], label: str) -> dict[str, Decision]:
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"The {APPROVAL!r} of {label} is not valid JSON: {exc.msg}.", hint=_HINT) from exc
        if not isinstance(parsed, dict):
            raise ConfigError(f"The {APPROVAL!r} of {label} must be a JSON object by call id.", hint=_HINT)
        return {str(call_id): _decision(each, reason, label) for call_id, each in parsed.items()}
    calls = json.loads(_text(row.get(TOOL_CALLS)) or "[]")
    return {str(call["id"]): _decision(value, reason, label) for call in calls if isinstance(call, dict)}


def _decision(value: Any, reason: str | None, label: str) -> Decision:
    """``approve``/``deny``, or ``{"choice", "reason", "arguments"}``; the row's reason for a denial without one."""
    if isinstance(value, dict):
        word, reason, arguments = value.get("choice"), value.get("reason", reason), value.get("arguments")
    else:
        word, arguments = value, None
    choice = _WORDS.get(str(word).strip().lower())
    if choice is None:
        raise ConfigError(f"The {APPROVAL!r} of {label} is {word!r}; use approve or deny.", hint=_HINT)
    return Decision(choice, arguments=arguments, reason=reason if choice == "deny" else None)  # type: ignore[arg-type]


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value).strip() or None
