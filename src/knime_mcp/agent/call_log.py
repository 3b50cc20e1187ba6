"""The agent run's tool-call log: one entry per tool call (and per change of a server's tools), as the Agent node's
second output table.

Layer: core, below :mod:`knime_mcp.agent.toolset`, which writes the log (and re-exports this module's names), and
the Agent node, which outputs it with :func:`log_table`. Each entry keeps the dispatcher's
:class:`~knime_mcp.calls.dispatch.CallRecord` and the whole result, which the model may have seen cut to the output
cap; the log's shape (:data:`LOG_COLUMNS`) is the node's output spec, so it is kept apart from how the calls run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knime_mcp.calls.dispatch import CallRecord
from knime_mcp.columns import ColumnKind, arrow_type
from knime_mcp.tools.tool import KIND_LABELS

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pyarrow as pa

    from knime_mcp.agent.approval import ApprovalRecord
    from knime_mcp.agent.tool_changes import ToolChange

__all__ = ["LOG_COLUMNS", "TOOLS_CHANGED", "ToolCallLogEntry", "log_table", "tools_changed_entry"]

_KINDS = {**KIND_LABELS, "search": "tool search"}
"""The log's *Kind* of each call record's kind: a tools table's (its *Kind* column), and the agent's own."""

TOOLS_CHANGED = "tools/list_changed"
"""The *Tool* of the tool-call log's note that a server's tools changed during the run."""

LOG_COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("Turn", "long"),
    ("Tool Call ID", "string"),
    ("Tool", "string"),
    ("Kind", "string"),
    ("Server", "string"),
    ("Arguments", "string"),
    ("Status", "string"),
    ("Error", "string"),
    ("Duration (ms)", "double"),
    ("Attempts", "long"),
    ("Result Size", "long"),
    ("Result", "string"),
    ("Approval", "string"),
    ("Approval Time", "string"),
    ("App URI", "string"),
    ("App bytes", "long"),
)
"""The tool-call log's columns and their kinds; the app's came last, so that the columns of earlier logs keep their
places (a chat's earlier log gets them as missing cells)."""


@dataclass(frozen=True, kw_only=True)
class ToolCallLogEntry:
    """One tool call of a run: the dispatcher's record, placed in the conversation, with the full result."""

    turn: int
    tool_call_id: str
    tool: str
    """The model-facing name, as in the conversation."""

    record: CallRecord
    result: str | None
    """The whole result as JSON, which the model may have seen cut to the output cap; None when the call failed."""

    approval: ApprovalRecord | None = None
    """A person's decision about the call, and when it was made; None when the call needed no approval."""

    app_uri: str | None = None
    """The ``ui://`` resource of the tool's MCP App; None for a tool without one."""

    app_bytes: int | None = None
    """The size of the app's HTML (UTF-8), once a call of the tool succeeded and the app was read
    (:mod:`knime_mcp.agent.app_reads`); None before, or when the read failed."""

    @property
    def kind(self) -> str:
        """``MCP``, ``HTTP``, ``workflow``, ``resource``, ``tool search`` (the agent's search for tools), or ``unknown``
        for a name no tool has."""
        return _KINDS.get(self.record.kind, self.record.kind)

    @property
    def server(self) -> str | None:
        return self.record.server

    @property
    def status(self) -> str:
        return self.record.status

    @property
    def error(self) -> str | None:
        return self.record.error

    @property
    def duration_ms(self) -> float:
        return self.record.duration_ms

    @property
    def result_size(self) -> int:
        """Characters of the result as JSON; 0 when the call failed before a result."""
        return len(self.result or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "tool_call_id": self.tool_call_id,
            **self.record.to_dict(),
            "tool": self.tool,
            "kind": self.kind,
            "result_size": self.result_size,
            "result": self.result,
            "approval": self.approval and self.approval.choice,
            "approval_time": self.approval and self.approval.time,
            "app_uri": self.app_uri,
            "app_bytes": self.app_bytes,
        }

    def values(self) -> tuple[Any, ...]:
        """The entry in the order of :data:`LOG_COLUMNS`."""
        record = self.record
        return (
            self.turn, self.tool_call_id, self.tool, self.kind, record.server, record.arguments_json, record.status,
            record.error, record.duration_ms, record.attempts, self.result_size, self.result,
            self.approval and self.approval.choice, self.approval and self.approval.time, self.app_uri, self.app_bytes,
        )  # fmt: skip


def tools_changed_entry(change: ToolChange, turn: int) -> ToolCallLogEntry:
    """The tool-call log's note that a server changed its tools: which are offered from the next model call on,
    which changed their annotations, and which of those the policy blocks now."""
    record = CallRecord(
        tool=TOOLS_CHANGED, kind="mcp", server=change.server, arguments={}, status="tools_changed", error=None,
        duration_ms=0.0,
    )  # fmt: skip
    result = json.dumps(change.to_dict(), ensure_ascii=False)
    return ToolCallLogEntry(turn=turn, tool_call_id="", tool=TOOLS_CHANGED, record=record, result=result)


def log_table(entries: Sequence[ToolCallLogEntry]) -> pa.Table:
    """The tool-call log as an Arrow table with the columns of :data:`LOG_COLUMNS`."""
    import pyarrow as pa

    rows = [entry.values() for entry in entries]
    return pa.table(
        {name: pa.array([row[i] for row in rows], arrow_type(kind)) for i, (name, kind) in enumerate(LOG_COLUMNS)}
    )
