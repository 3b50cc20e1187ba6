"""Column kinds: how the core's tables declare their columns, so that a KNIME node can make its output spec from them
before any row exists, and the core its Arrow tables from the same declaration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ColumnKind", "arrow_type"]

ColumnKind = Literal["string", "long", "double", "boolean", "image"]
"""Text, a 64-bit integer, a float, a flag, or PNG bytes (Arrow ``large_binary``), which KNIME shows as images."""


def arrow_type(kind: ColumnKind) -> pa.DataType:
    """The Arrow type of a column of ``kind``."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "long": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "image": pa.large_binary(),
    }
    return types[kind]
