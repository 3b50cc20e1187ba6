"""Column kinds: the core's tables have the Arrow types their declared columns promise, which is what the KNIME
nodes' output specs are made from before any row exists."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import get_args

import pyarrow as pa
import pytest

from knime_mcp.agent.call_log import LOG_COLUMNS, log_table
from knime_mcp.caller.batches import RESULT_COLUMNS
from knime_mcp.catalog.resource_reader import CONTENT_COLUMNS, LISTING_COLUMNS, listing_table
from knime_mcp.columns import ColumnKind, arrow_type
from knime_mcp.conversation import Conversation, conversation_columns, conversation_table


@pytest.mark.parametrize(
    "columns",
    [LOG_COLUMNS, RESULT_COLUMNS, LISTING_COLUMNS, CONTENT_COLUMNS, tuple(conversation_columns(error_column=True))],
)
def test_every_declared_column_has_a_kind_with_an_arrow_type(columns: tuple[tuple[str, ColumnKind], ...]) -> None:
    assert {kind for _, kind in columns} <= set(get_args(ColumnKind))
    assert all(isinstance(arrow_type(kind), pa.DataType) for _, kind in columns)


@pytest.mark.parametrize(
    ("table", "columns"),
    [
        (lambda: log_table([]), LOG_COLUMNS),
        (lambda: listing_table([], []), LISTING_COLUMNS),
        (lambda: conversation_table(Conversation(), error_column=True), conversation_columns(error_column=True)),
    ],
)
def test_a_core_table_has_the_types_its_columns_declare(
    table: Callable[[], pa.Table], columns: Sequence[tuple[str, ColumnKind]]
) -> None:
    assert table().schema == pa.schema([(name, arrow_type(kind)) for name, kind in columns])
