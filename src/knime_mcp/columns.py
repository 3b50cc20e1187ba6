"""Column kinds: how the core's tables declare their columns, so that a KNIME node can make its output spec from them
before any row exists, and the core its Arrow tables from the same declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ROW_ID_COLUMN", "ColumnKind", "arrow_type", "row_label"]

ColumnKind = Literal["string", "long", "double", "boolean", "image", "string list"]
"""Text, a 64-bit integer, a float, a flag, PNG bytes (Arrow ``large_binary``), which KNIME shows as images, or a
list of texts (KNIME's list cell of strings)."""


def arrow_type(kind: ColumnKind) -> pa.DataType:
    """The Arrow type of a column of ``kind``."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "long": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "image": pa.large_binary(),
        "string list": pa.list_(pa.string()),
    }
    return types[kind]


ROW_ID_COLUMN = "<RowID>"
"""The RowID column KNIME puts first in ``to_pyarrow()`` tables; never matched to a parameter. A name KNIME reserves:
no data column may have it. The one definition, for the core and the nodes alike."""


def row_label(number: int, row: Mapping[str, Any]) -> str:
    """How an error names a row: its number in the table (from 1), and its KNIME RowID when ``row`` has one."""
    return f"Row {number}" + (f" (RowID {row[ROW_ID_COLUMN]})" if ROW_ID_COLUMN in row else "")
