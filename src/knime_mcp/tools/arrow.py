"""The table forms of MCPTool: an Arrow extension column, and the JSON column KNIME tables hold.

Sits at the edge between the core's :class:`MCPTool` values and tables: the provider writes the tools table, the
caller, the agent and the CLI read it back. Both forms have the same columns (:data:`COLUMNS`): the tool itself in
"MCP Tool", then flat columns for people to read (notes joined by new lines, the server by its display name).

- Arrow (:func:`tools_to_arrow`): "MCP Tool" is the registered extension type :class:`MCPToolType`, a struct with
  schemas as JSON text. It survives IPC streams and Parquet in any process that imported this module, and
  ``table.to_pandas()`` turns it into a column of MCPTool objects.
- KNIME (:func:`tools_to_table`, or :func:`tools_to_frame` in pandas): a pure-Python extension cannot add a column
  type, so "MCP Tool" holds each tool's ``to_json()`` as a string.

Conversion is column-wise (one list per field, no per-row Arrow scalars), and each tool's schemas are serialised
once for all the columns that show them: a provider lists thousands of tools.

The modules, bottom to top: :mod:`~knime_mcp.tools.table_layout` (the struct and the columns),
:mod:`~knime_mcp.tools.table_reading` (tools read back), :mod:`~knime_mcp.tools.arrow_extension` (the extension type
and its pandas dtype), and this one, which writes both forms. Import from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from knime_mcp.tools.annotations import compact_json
from knime_mcp.tools.arrow_extension import MCPToolArray, MCPToolScalar, MCPToolType, register_mcp_tool_type
from knime_mcp.tools.permissions import needed_permissions
from knime_mcp.tools.table_layout import (
    BOOL_COLUMNS,
    COLUMN_KINDS,
    COLUMNS,
    EXTENSION_NAME,
    FLAT,
    STORAGE,
    TOOL_COLUMN,
    flat_type,
)
from knime_mcp.tools.table_reading import tools_from_arrow, tools_from_frame
from knime_mcp.tools.tags import all_tags
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.tool_cells import ToolWriter, tool_cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BOOL_COLUMNS",
    "COLUMNS",
    "COLUMN_KINDS",
    "EXTENSION_NAME",
    "TOOL_COLUMN",
    "MCPToolArray",
    "MCPToolScalar",
    "MCPToolType",
    "register_mcp_tool_type",
    "tools_from_arrow",
    "tools_from_frame",
    "tools_to_arrow",
    "tools_to_frame",
    "tools_to_table",
    "write_tools",
]


def tools_to_arrow(tools: Iterable[MCPTool]) -> pa.Table:
    """The provider's tools table in Arrow form.

    table = tools_to_arrow(tools)
    assert tools_from_arrow(table) == tools
    """
    encoded = _encode(tools, cells=False)
    arrays = {field.name: pa.array(encoded[field.name], type=field.type) for field in STORAGE}
    storage = pa.StructArray.from_arrays(list(arrays.values()), fields=list(STORAGE))
    return _table(pa.ExtensionArray.from_storage(MCPToolType(), storage), encoded, arrays)


def tools_to_table(tools: Iterable[MCPTool]) -> pa.Table:
    """The provider's tools table in KNIME form, as Arrow: "MCP Tool" holds JSON strings, flags are booleans. What
    the provider node hands to ``knext.Table.from_pyarrow``."""
    encoded = _encode(tools, cells=True)
    return _table(pa.array(encoded["cell"], type=pa.string()), encoded, {})


def _table(tool_column: pa.Array, encoded: dict[str, list[Any]], arrays: Mapping[str, pa.Array]) -> pa.Table:
    """The tools table: ``tool_column``, then the readable columns (from ``arrays`` where already built)."""
    flat = [arrays[key] if key in arrays else pa.array(encoded[key], type=flat_type(key)) for _, key in FLAT]
    return pa.Table.from_arrays([tool_column, *flat], names=list(COLUMNS))


def write_tools(tools: Iterable[MCPTool], path: str | os.PathLike[str], fmt: Literal["arrow", "parquet"]) -> None:
    """Write the Arrow tools table to an Arrow IPC file or a Parquet file (for the CLI)."""
    table = tools_to_arrow(tools)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        with pa.OSFile(os.fspath(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)


def tools_to_frame(tools: Iterable[MCPTool]) -> pd.DataFrame:
    """The provider's tools table in KNIME form: "MCP Tool" holds JSON strings, flags are booleans."""
    return tools_to_table(tools).to_pandas()


_READABLE = tuple(key for _, key in FLAT)
_STRUCT_ONLY = tuple(field.name for field in STORAGE if field.name not in _READABLE)


def _encode(tools: Iterable[MCPTool], *, cells: bool) -> dict[str, list[Any]]:
    """One list per readable column, and either each tool's JSON (``cell``: KNIME's "MCP Tool" cell) or the rest of
    the struct's fields. Each distinct server is serialised and checked for its seal once, without its own seal:
    the table's seal is each tool's (:func:`knime_mcp.seal.tool_sealer`)."""
    writer = ToolWriter()
    tags_of: dict[tuple[object, ...], tuple[str, ...]] = {}
    rows = []
    for tool in tools:
        texts, server, seal = writer.parts(tool)
        hints = tool.annotations
        # The Tags column follows from the server, the tool's own tags and its hints, which the tools of a listing
        # share: worked out once per distinct combination, not per tool.
        tags_key = (tool.server.name, tool.kind, tool.tags, hints)
        if (tags := tags_of.get(tags_key)) is None:
            tags = tags_of[tags_key] = all_tags(tool)
        readable = (
            tool.name, tool.title, tool.description, texts[0], texts[2],
            hints.read_only, hints.destructive, hints.idempotent, hints.open_world,
            tool.server.display_name, "\n".join(tool.notes), tool.tool_id, tool.kind_label, tags, tool.app_uri,
            needed_permissions(tool),
        )  # fmt: skip
        if cells:
            rows.append((*readable, tool_cell(tool, texts, server, seal)))
        else:
            rows.append(
                (
                    *readable, tool.tool_name, texts[1], server, tool.notes, hints.annotated,
                    tool.task_support, seal, texts[3], tool.tags, tool.app_only,
                    None if tool.program is None else compact_json(tool.program.to_dict()),
                )
            )  # fmt: skip
    keys = (*_READABLE, *(("cell",) if cells else _STRUCT_ONLY))
    columns = zip(*rows, strict=True) if rows else ([] for _ in keys)
    return {key: list(values) for key, values in zip(keys, columns, strict=True)}
