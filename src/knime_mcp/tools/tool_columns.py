"""A tools table's columns a person adds beside the MCP Tool column (e.g. with a Table Creator joined on the tool
names, or a Column Expressions node): *Timeout (s)*, the seconds a call of each tool may take, and the hints
*Expected time (s)* and *Cost*, which the agents may tell the model (:meth:`ToolHints.sentence`). A missing column
or cell leaves the node's own call timeout, and no hint. The agents and the Tool Caller take them through
:attr:`MCPTool.timeout` and :attr:`MCPTool.hints`.

Layer: values. The columns are data like the rest of the table, so each value is checked here (a number of seconds
above 0 and at most :data:`MAX_TOOL_TIMEOUT`; a cost as text or a number, cleaned and cut to :data:`MAX_COST_CHARS`)
and a bad one is the row's ConfigError naming the column. They lie outside the tool's cell, so editing them leaves
the table's seal whole: the seal guards whether a call may run and where it goes, and a timeout, bounded so, or a
hint, decides neither.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.tool_hints import MAX_COST_CHARS, ToolHints

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "COST_COLUMN", "EXPECTED_TIME_COLUMN", "MAX_COST_CHARS", "MAX_TOOL_TIMEOUT", "OWN_TIMEOUT_HINT",
    "RAISE_CALL_TIMEOUT", "TIMEOUT_COLUMN", "TOOL_COLUMNS", "ToolHints", "present_columns",
    "with_tool_columns",
]  # fmt: skip

TIMEOUT_COLUMN = "Timeout (s)"
EXPECTED_TIME_COLUMN = "Expected time (s)"
COST_COLUMN = "Cost"
TOOL_COLUMNS = (TIMEOUT_COLUMN, EXPECTED_TIME_COLUMN, COST_COLUMN)
"""The columns of a tools table read beside its tools, wherever a tools table is read (nodes, CLI tools files)."""

RAISE_CALL_TIMEOUT = "Raise the call timeout if the tool is slow."
"""A timed-out call's advice (:mod:`knime_mcp.mcp.client`), for a call under the run's own timeout."""

OWN_TIMEOUT_HINT = f"Raise the tool's {TIMEOUT_COLUMN!r} in its tools table if the tool is slow."
"""The advice instead, for a call under its tool's own timeout (:mod:`knime_mcp.calls.dispatch`)."""

MAX_TOOL_TIMEOUT = 24 * 60 * 60
"""Seconds: a day, longer than any call a node should wait for, short enough that a table cannot hang a run."""


def present_columns(table: pa.Table) -> dict[str, list[Any]]:
    """The cells of the columns of :data:`TOOL_COLUMNS` that ``table`` has, by name."""
    return {name: table.column(name).to_pylist() for name in TOOL_COLUMNS if name in table.column_names}


def with_tool_columns(
    tools: Sequence[MCPTool], columns: Mapping[str, Sequence[Any]], labels: Sequence[str]
) -> list[MCPTool]:
    """``tools`` (one per row) with the cells of their rows in ``columns`` (those of :data:`TOOL_COLUMNS` the table
    has, by name), rows named by ``labels`` in messages; a tool without any such cell is the same tool."""
    timeouts = columns.get(TIMEOUT_COLUMN) or [None] * len(tools)
    times = columns.get(EXPECTED_TIME_COLUMN) or [None] * len(tools)
    costs = columns.get(COST_COLUMN) or [None] * len(tools)
    changed = []
    for tool, timeout, time, cost, label in zip(tools, timeouts, times, costs, labels, strict=True):
        changes: dict[str, Any] = {}
        if (seconds := _seconds(timeout, TIMEOUT_COLUMN, label, "a timeout", "for the node's own timeout")) is not None:
            changes["timeout"] = seconds
        hints = ToolHints(
            expected_seconds=_seconds(time, EXPECTED_TIME_COLUMN, label, "a time", "for no hint"),
            cost=_cost(cost, label),
        )
        if hints != ToolHints():
            changes["hints"] = hints
        changed.append(tool.with_changes(**changes) if changes else tool)
    return changed


def _missing(cell: Any) -> bool:
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def _shown(cell: Any) -> str:
    return repr(cell) if len(repr(cell)) <= 40 else repr(cell)[:39] + "…"


def _seconds(cell: Any, column: str, label: str, what: str, missing: str) -> float | None:
    if _missing(cell):
        return None
    if isinstance(cell, bool) or not isinstance(cell, int | float) or not 0 < cell <= MAX_TOOL_TIMEOUT:
        raise ConfigError(
            f"Column {column!r}, row {label}: {_shown(cell)} is not {what} in seconds.",
            hint=f"Give a number above 0 and at most {MAX_TOOL_TIMEOUT} (24 h), or leave the cell missing {missing}.",
        )
    return float(cell)


def _cost(cell: Any, label: str) -> str | None:
    """A *Cost* cell as the model is told it: a number as written (``0.02``), text on one line without control or
    format characters, cut to :data:`MAX_COST_CHARS`; None for a missing or blank cell."""
    if _missing(cell):
        return None
    if (
        isinstance(cell, bool)
        or not isinstance(cell, str | int | float)
        or (isinstance(cell, float) and math.isinf(cell))
    ):
        raise ConfigError(
            f"Column {COST_COLUMN!r}, row {label}: {_shown(cell)} is not a cost.",
            hint="Give a number or a short text such as '0.02 USD per call', or leave the cell missing for no hint.",
        )
    text = cell if isinstance(cell, str) else str(cell) if isinstance(cell, int) else f"{cell:g}"
    kept = "".join(" " if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") else char for char in text)
    line = " ".join(kept.split())
    if len(line) > MAX_COST_CHARS:
        line = line[: MAX_COST_CHARS - 1].rstrip() + "…"
    return line or None
