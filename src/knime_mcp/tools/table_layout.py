"""The layout of a tools table: the struct behind an "MCP Tool" cell, and the readable columns after it.

The bottom of the table forms of :class:`~knime_mcp.tools.tool.MCPTool` (:mod:`knime_mcp.tools.arrow`): what the
writer fills, the reader expects and the extension type stores, in one place.
"""

from __future__ import annotations

import pyarrow as pa

from knime_mcp.columns import ColumnKind, arrow_type

__all__ = [
    "BOOL_COLUMNS", "BOOL_KEYS", "COLUMNS", "COLUMN_KINDS", "EXTENSION_NAME", "FLAT", "LIST_KEYS", "STORAGE",
    "TOOL_COLUMN", "flat_type",
]  # fmt: skip

EXTENSION_NAME = "knime_mcp.mcp_tool"
TOOL_COLUMN = "MCP Tool"

STORAGE = pa.struct(
    [
        pa.field("name", pa.string(), nullable=False),
        pa.field("tool_name", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("description", pa.string(), nullable=False),
        pa.field("input_schema", pa.string(), nullable=False),
        pa.field("parameter_schema", pa.string(), nullable=False),
        pa.field("output_schema", pa.string()),
        pa.field("read_only", pa.bool_(), nullable=False),
        pa.field("destructive", pa.bool_(), nullable=False),
        pa.field("idempotent", pa.bool_(), nullable=False),
        pa.field("open_world", pa.bool_(), nullable=False),
        pa.field("server", pa.string(), nullable=False),
        pa.field("notes", pa.list_(pa.string()), nullable=False),
        pa.field("annotated", pa.bool_()),
        pa.field("task_support", pa.string()),
        pa.field("seal", pa.string()),
        pa.field("http", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("app_uri", pa.string()),
        pa.field("app_only", pa.bool_()),
        pa.field("program", pa.string()),
    ]
)
"""The struct behind the extension type: schemas and the server as JSON text, so any reader can take them."""

BOOL_KEYS = frozenset(field.name for field in STORAGE if field.type == pa.bool_())
"""The struct's fields that hold flags."""

FLAT: tuple[tuple[str, str], ...] = (
    ("Name", "name"),
    ("Title", "title"),
    ("Description", "description"),
    ("Input Schema", "input_schema"),
    ("Output Schema", "output_schema"),
    ("Read-only", "read_only"),
    ("Destructive", "destructive"),
    ("Idempotent", "idempotent"),
    ("Open-world", "open_world"),
    ("Server", "server_name"),
    ("Notes", "notes_text"),
    ("Tool ID", "tool_id"),
    ("Kind", "kind_label"),
    ("Tags", "all_tags"),
    ("App", "app_uri"),
    ("Permissions", "permissions"),
)
"""The readable columns after "MCP Tool": (column name, key of the encoded lists). The tool id, kind and tags came
last (0.5.0), then the app (the ``ui://`` URI of the tool's MCP App) and the permissions the tool needs
(:mod:`knime_mcp.tools.permissions`), so that the columns of earlier tables keep their places."""

LIST_KEYS = frozenset({"all_tags", "permissions"})
"""The readable columns' keys that hold lists of text."""

COLUMNS: tuple[str, ...] = (TOOL_COLUMN, *(column for column, _ in FLAT))
"""The column names of a tools table, in order, in both forms."""

BOOL_COLUMNS = frozenset(column for column, key in FLAT if key in BOOL_KEYS)
"""The columns of a tools table that hold booleans."""


def _kind(key: str) -> ColumnKind:
    return "boolean" if key in BOOL_KEYS else "string list" if key in LIST_KEYS else "string"


COLUMN_KINDS: tuple[tuple[str, ColumnKind], ...] = (
    (TOOL_COLUMN, "string"),
    *((name, _kind(key)) for name, key in FLAT),
)
"""The tools table's columns in KNIME form, with their kinds: an output spec before any row exists (the MCP Tool
column holds each tool's JSON text there)."""


def flat_type(key: str) -> pa.DataType:
    """The Arrow type of the readable column whose encoded list is ``key``."""
    return arrow_type(_kind(key))
