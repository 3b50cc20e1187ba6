"""A tools table's *Timeout (s)* column: the seconds a call of each tool may take, which a person adds beside the
MCP Tool column (e.g. with a Table Creator joined on the tool names); a missing column or cell leaves the node's own
call timeout. The agents and the Tool Caller take it through :attr:`MCPTool.timeout`.

Layer: values. The column is data like the rest of the table, so each value is checked here (a number above 0 and
at most :data:`MAX_TOOL_TIMEOUT`) and a bad one is the row's ConfigError naming the column. It lies outside the
tool's cell, so editing it leaves the table's seal whole: the seal guards whether a call may run and where it goes,
and a timeout, bounded so, decides neither.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool

__all__ = ["MAX_TOOL_TIMEOUT", "OWN_TIMEOUT_HINT", "RAISE_CALL_TIMEOUT", "TIMEOUT_COLUMN", "with_timeouts"]

TIMEOUT_COLUMN = "Timeout (s)"

RAISE_CALL_TIMEOUT = "Raise the call timeout if the tool is slow."
"""A timed-out call's advice (:mod:`knime_mcp.mcp.client`), for a call under the run's own timeout."""

OWN_TIMEOUT_HINT = f"Raise the tool's {TIMEOUT_COLUMN!r} in its tools table if the tool is slow."
"""The advice instead, for a call under its tool's own timeout (:mod:`knime_mcp.calls.dispatch`)."""

MAX_TOOL_TIMEOUT = 24 * 60 * 60
"""Seconds: a day, longer than any call a node should wait for, short enough that a table cannot hang a run."""


def with_timeouts(tools: Sequence[MCPTool], cells: Sequence[Any], labels: Sequence[str]) -> list[MCPTool]:
    """``tools`` (one per row) with the *Timeout (s)* ``cells`` of their rows, named by ``labels`` in messages."""
    return [
        tool if (seconds := _seconds(cell, label)) is None else tool.with_changes(timeout=seconds)
        for tool, cell, label in zip(tools, cells, labels, strict=True)
    ]


def _seconds(cell: Any, label: str) -> float | None:
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return None
    if isinstance(cell, bool) or not isinstance(cell, int | float) or not 0 < cell <= MAX_TOOL_TIMEOUT:
        shown = repr(cell) if len(repr(cell)) <= 40 else repr(cell)[:39] + "…"
        raise ConfigError(
            f"Column {TIMEOUT_COLUMN!r}, row {label}: {shown} is not a timeout in seconds.",
            hint=f"Give a number above 0 and at most {MAX_TOOL_TIMEOUT} (24 h), or leave the cell missing for the "
            "node's own timeout.",
        )
    return float(cell)
