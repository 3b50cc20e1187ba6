"""KNIME I/O: the conversation table in KNIME: what the agent nodes output and take as history, and the MCP Prompt
node outputs so that a server's prompt can start an agent run."""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from knime_mcp.errors import ConfigError
from nodes.knime_io.images import with_png_cells
from nodes.knime_io.tables import knime_columns

__all__ = ["check_history", "conversation_schema", "knime_conversation"]


def conversation_schema(error_column: bool) -> knext.Schema:
    from knime_mcp.conversation import conversation_columns

    return knext.Schema.from_columns(knime_columns(conversation_columns(error_column=error_column)))


def knime_conversation(table: Any) -> knext.Table:
    """The core's conversation table with its PNG bytes column as PNG image cells (one batch, also without rows)."""
    import pyarrow as pa

    from knime_mcp.conversation import IMAGE

    batch = pa.record_batch([column.combine_chunks() for column in table.columns], schema=table.schema)
    return knext.Table.from_pyarrow(pa.Table.from_batches([with_png_cells(batch, [IMAGE])]))


def check_history(history: knext.Schema | None) -> None:
    """A conversation input must hold the columns the agent nodes write (both nodes read it the same way)."""
    from knime_mcp.conversation import CONTENT, ROLE

    if history is not None and not {ROLE, CONTENT} <= set(history.column_names):
        raise ConfigError(
            f"The conversation table needs the columns {ROLE!r} and {CONTENT!r}.",
            hint="Connect a conversation table as this node outputs it.",
        )
