"""KNIME I/O: tools tables, the one way between a tools table's cells and the core's tools. A tools table enters a
node here (its MCP Tool column, and KNIME's own tool column: WorkflowTool or the unified Tool type) and leaves a
provider here (the core's tools table, with a *KNIME Tool* column where the running KNIME has that type).

KNIME's unified Tool value (ToolType WORKFLOW or MCP) exists only in KNIME built from its ``mcp-tools`` branch;
today's releases have the older ``WorkflowTool`` alone. Where the type exists, the providers add a *KNIME Tool*
column of MCP-kind values beside the *MCP Tool* column, so KNIME's own agent nodes can take the tools, and the Agent
Prompter and Tool Caller read such columns. Elsewhere nothing changes. What of a tool the type carries is decided in
the core (:mod:`knime_mcp.tools.knime_tool`); this module only builds and reads the cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from nodes.knime_io.tables import knime_columns, read_pyarrow
from nodes.knime_io.warnings import add_warning
from nodes.parameters.column_types import knime_tool_type

if TYPE_CHECKING:
    import pyarrow as pa

    from knime_mcp.tools.knime_tool import KnimeToolFields
    from knime_mcp.tools.tool import MCPTool

__all__ = ["TableTools", "output_schema", "table_tools", "tools_output"]


@dataclass
class TableTools:
    """The tools a tools table holds, as the core takes them."""

    mcp: list[MCPTool]
    """The MCP tools: the MCP Tool cells, then the MCP-kind KNIME Tool cells those do not already give."""
    workflows: list[Any]
    """KNIME's workflow tools (``WorkflowTool`` values, or ``Tool`` values of ToolType WORKFLOW), for the core's
    :func:`~knime_mcp.agent.workflow.workflow_tools`."""


def table_tools(table: knext.Table, mcp_column: str | None, tool_column: str | None) -> TableTools:
    """The tools of ``table``'s MCP Tool column ``mcp_column`` and KNIME tool column ``tool_column`` (either may be
    None), the MCP Tool column's with a person's *Timeout (s)*, *Expected time (s)* and *Cost* columns where the table
    has them; the table's other columns stay unread."""
    from knime_mcp.tools.arrow import tools_from_frame
    from knime_mcp.tools.knime_tool import mcp_tools_of_knime
    from knime_mcp.tools.tool_columns import present_columns, with_tool_columns

    arrow = read_pyarrow(table)
    listed = tools_from_frame(_frame(arrow, mcp_column), mcp_column) if mcp_column else []
    if listed and (columns := present_columns(arrow)):
        listed = with_tool_columns(listed, columns, [str(label) for label in arrow.column(0).to_pylist()])
    cells = _cells(arrow, tool_column)
    knime_mcp = mcp_tools_of_knime([_fields(cell) for cell in cells if _is_mcp(cell)], listed)
    return TableTools([*listed, *knime_mcp], [cell for cell in cells if not _is_mcp(cell)])


def _frame(arrow: pa.Table, column: str) -> Any:
    """One column of the tools table in pandas, indexed by RowID."""
    return arrow.select([arrow.column_names[0], column]).to_pandas().set_index(arrow.column_names[0])


def _cells(arrow: pa.Table, column: str | None) -> list[Any]:
    """The values of a KNIME tool column, its missing cells left out (none without a column): KNIME's tool types fail
    to read a missing cell (``decode(None)``), and a tools table concatenated from several kinds of tools has them."""
    if column is None:
        return []
    cells = arrow.column(column)
    return cells.filter(cells.is_valid()).to_pylist()  # type: ignore[no-any-return]


def output_schema() -> knext.Schema:
    """The providers' tools table columns (the MCP and the HTTP Tool Provider): with the *KNIME Tool* column where
    KNIME has its Tool type."""
    from knime_mcp.tools.arrow import COLUMN_KINDS
    from knime_mcp.tools.knime_tool import KNIME_TOOL_COLUMN

    schema = knext.Schema.from_columns(knime_columns(COLUMN_KINDS))
    kind = knime_tool_type()
    return schema if kind is None else schema.append(knext.Column(kind, KNIME_TOOL_COLUMN))


def tools_output(ctx: knext.ExecutionContext, tools: Sequence[MCPTool], notes: Sequence[str]) -> knext.Table:
    """The providers' output table of ``tools``, with the listing's ``notes`` and the tools that have no KNIME Tool
    value in the node warning."""
    from knime_mcp.tools.arrow import tools_to_table

    table, left_out = _with_knime_tools(tools_to_table(tools), tools)
    notes = [*notes, *([left_out] if left_out else [])]
    if notes:
        add_warning(ctx, f"{len(notes)} note(s): " + " | ".join(notes))
    return knext.Table.from_pyarrow(table)


def _with_knime_tools(table: pa.Table, tools: Sequence[MCPTool]) -> tuple[pa.Table, str | None]:
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
