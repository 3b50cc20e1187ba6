"""Parameters (the node layer's lowest room): the KNIME column types that column settings offer and that the nodes
look for in a table, such as KNIME's tool types, which exist only in some KNIME versions.

KNIME's unified Tool value (ToolType WORKFLOW or MCP) exists only in KNIME built from its ``mcp-tools`` branch;
today's releases have the older ``WorkflowTool`` alone (KNIME 5.5 and later)."""

from __future__ import annotations

import knime.extension as knext

__all__ = ["is_knime_tool", "is_string_column", "is_workflow_column", "knime_tool_type"]


def is_string_column(column: knext.Column) -> bool:
    """A text column: what a column parameter that takes text offers (its ``column_filter``)."""
    return column.ktype == knext.string()


def knime_tool_type() -> knext.KnimeType | None:
    """KNIME's unified Tool column type, or None in a KNIME without it (no module, no ``Tool``, or a ``Tool`` whose
    value factory KNIME's Java side did not register)."""
    try:
        from knime.types.tool import Tool  # type: ignore[attr-defined]

        return knext.logical(Tool)
    except (ImportError, TypeError):
        return None


def is_knime_tool(column: knext.Column) -> bool:
    kind = knime_tool_type()
    return kind is not None and column.ktype == kind


def _workflow_tool_type() -> knext.KnimeType | None:
    """KNIME's WorkflowTool column type, which exists only inside KNIME 5.5 and later."""
    try:
        from knime.types.tool import WorkflowTool

        return knext.logical(WorkflowTool)
    except (ImportError, TypeError):
        return None


def is_workflow_column(column: knext.Column) -> bool:
    """A column of KNIME's WorkflowTool type, or of its unified Tool type where KNIME has it (both kinds)."""
    kind = _workflow_tool_type()
    return (kind is not None and column.ktype == kind) or is_knime_tool(column)
