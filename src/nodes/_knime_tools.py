"""KNIME's own Tool column type (``knime.types.tool.Tool``), where the running KNIME has it.

KNIME's unified Tool value (ToolType WORKFLOW or MCP) exists only in KNIME built from its ``mcp-tools`` branch;
today's releases have the older ``WorkflowTool`` alone. Where the type exists, the providers add a *KNIME Tool*
column of MCP-kind values beside the *MCP Tool* column, so KNIME's own agent nodes can take the tools, and the Agent
Prompter and Tool Caller read such columns. Elsewhere nothing changes. What of a tool the type carries is decided in
the core (:mod:`knime_mcp.tools.knime_tool`); this module only builds and reads the cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import knime.extension as knext

if TYPE_CHECKING:
    import pyarrow as pa

    from knime_mcp.tools.knime_tool import KnimeToolFields
    from knime_mcp.tools.tool import MCPTool

__all__ = [
    "is_knime_tool", "knime_tool_type", "split_tool_cells", "valid_cells", "with_knime_tools",
    "with_knime_tools_column",
]  # fmt: skip


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


def with_knime_tools_column(schema: knext.Schema) -> knext.Schema:
    """A provider's output spec: ``schema`` and, where KNIME has the type, the *KNIME Tool* column."""
    from knime_mcp.tools.knime_tool import KNIME_TOOL_COLUMN

    kind = knime_tool_type()
    return schema if kind is None else schema.append(knext.Column(kind, KNIME_TOOL_COLUMN))


def with_knime_tools(table: pa.Table, tools: Sequence[MCPTool]) -> tuple[pa.Table, str | None]:
    """A provider's tools table (``tools_to_table``) with the *KNIME Tool* column where KNIME has the type, and the
    note naming the tools that got a missing cell; ``table`` unchanged where the type does not exist."""
    from knime_mcp.tools.knime_tool import KNIME_TOOL_COLUMN, knime_tool_cells

    kind = knime_tool_type()
    if kind is None:
        return table, None
    cells, note = knime_tool_cells(tools)
    return table.append_column(KNIME_TOOL_COLUMN, _tool_array(kind, cells)), note


def _tool_array(kind: knext.KnimeType, cells: Sequence[KnimeToolFields | None]) -> pa.Array:
    """The cells as KNIME's Tool column: each value encoded by KNIME's own ``ToolValueFactory``, missing cells as
    nulls (its ``encode`` takes no ``None``, so the column is built from the storage)."""
    import pyarrow as pa
    from knime.types.tool import Tool, ToolValueFactory  # type: ignore[attr-defined]

    factory = ToolValueFactory()
    arrow_type = kind.to_pyarrow()
    encoded = [
        None
        if cell is None
        else factory.encode(
            Tool.create_mcp_tool(
                name=cell.name,
                description=cell.description,
                parameter_schema=cell.parameter_schema,
                server_uri=cell.server_uri,
                tool_name=cell.name,
                credential_name=cell.credential_name,
            )
        )
        for cell in cells
    ]
    return pa.ExtensionArray.from_storage(arrow_type, pa.array(encoded, arrow_type.storage_type))


def valid_cells(arrow: pa.Table, column: str) -> list[Any]:
    """The values of a tool column, its missing cells left out: KNIME's tool types fail to read a missing cell
    (``decode(None)``), and a tools table concatenated from several kinds of tools has them."""
    cells = arrow.column(column)
    return cells.filter(cells.is_valid()).to_pylist()  # type: ignore[no-any-return]


def split_tool_cells(cells: Sequence[Any], listed: Sequence[MCPTool]) -> tuple[list[Any], list[MCPTool]]:
    """The workflow tools among a tool column's cells (``WorkflowTool`` values, or ``Tool`` values of ToolType
    WORKFLOW), and the MCP tools of its ``Tool`` values of ToolType MCP that the MCP Tool cells (``listed``) do not
    already give."""
    from knime_mcp.tools.knime_tool import mcp_tools_of_knime

    workflows = [cell for cell in cells if not _is_mcp(cell)]
    return workflows, mcp_tools_of_knime([_fields(cell) for cell in cells if _is_mcp(cell)], listed)


def _is_mcp(cell: Any) -> bool:
    return getattr(getattr(cell, "tool_type", None), "name", None) == "MCP"


def _fields(cell: Any) -> KnimeToolFields:
    from knime_mcp.tools.knime_tool import KnimeToolFields

    return KnimeToolFields(
        name=cell.tool_name or cell.name,
        description=cell.description or "",
        parameter_schema=cell.parameter_schema or {},
        server_uri=cell.server_uri,
        credential_name=cell.credential_name,
    )
