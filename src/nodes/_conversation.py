"""The conversation table in KNIME: what the Agent Prompter outputs and takes as history, and the MCP Prompt node
outputs so that a server's prompt can start an agent run."""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from nodes._images import with_png_cells
from nodes._tables import knime_columns

__all__ = ["conversation_schema", "knime_conversation"]


def conversation_schema(error_column: bool) -> knext.Schema:
    from knime_mcp.conversation import conversation_columns

    return knext.Schema.from_columns(knime_columns(conversation_columns(error_column=error_column)))


def knime_conversation(table: Any) -> knext.Table:
    """The core's conversation table with its PNG bytes column as PNG image cells (one batch, also without rows)."""
    import pyarrow as pa

    from knime_mcp.conversation import IMAGE

    batch = pa.record_batch([column.combine_chunks() for column in table.columns], schema=table.schema)
    return knext.Table.from_pyarrow(pa.Table.from_batches([with_png_cells(batch, [IMAGE])]))
