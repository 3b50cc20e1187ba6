"""KNIME I/O: reading input tables, also the empty ones KNIME hands over without a single batch.

Inside KNIME a table without rows may reach ``execute`` with no batch at all: ``batches()`` yields nothing, and
``to_pandas()`` and ``to_pyarrow()`` fail (pyarrow: "cannot construct ChunkedArray from empty vector and omitted
type"). Only its schema is there, so a table without rows is read from its schema instead: no rows, the same columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import knime.extension as knext

from knime_mcp.columns import ROW_ID_COLUMN
from nodes.knime_io.images import png_image_type

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from knime_mcp.columns import ColumnKind

__all__ = ["arrow_batches", "knime_columns", "read_pandas", "read_pyarrow"]


def knime_columns(columns: Iterable[tuple[str, ColumnKind]]) -> list[knext.Column]:
    """The KNIME columns of a core table's declared (name, kind) columns: an output spec before any row exists."""
    types = {
        "string": knext.string,
        "long": knext.int64,
        "double": knext.double,
        "boolean": knext.bool_,
        "image": png_image_type,
        "string list": lambda: knext.list_(knext.string()),
    }
    return [knext.Column(types[kind](), name) for name, kind in columns]


def read_pandas(table: knext.Table) -> pd.DataFrame:
    """``table.to_pandas()``; for a table without rows, a frame of its columns (of object dtype) and no rows."""
    import pandas as pd

    return table.to_pandas() if table.num_rows else pd.DataFrame(columns=table.column_names)


def read_pyarrow(table: knext.Table) -> pa.Table:
    """``table.to_pyarrow()`` (the RowID column first); for a table without rows, the same columns and types."""
    return table.to_pyarrow() if table.num_rows else _empty(table.schema)


def arrow_batches(table: knext.Table) -> Iterator[pa.Table]:
    """The table's batches as Arrow; a table without batches gives one empty batch, so what is made from its
    batches still gets its columns."""
    empty = True
    for batch in table.batches():
        empty = False
        yield batch.to_pyarrow()
    if empty:
        yield _empty(table.schema)


def _empty(schema: knext.Schema) -> pa.Table:
    import pyarrow as pa

    fields = [
        pa.field(ROW_ID_COLUMN, pa.string()),
        *(pa.field(column.name, _arrow_type(column.ktype)) for column in schema),
    ]
    return pa.schema(fields).empty_table()


def _arrow_type(ktype: knext.KnimeType) -> pa.DataType:
    """The Arrow type ``to_pyarrow()`` gives a column of ``ktype``; null (a column of missing values) for any other
    type: binary, which KNIME's Python tables cannot write back, or a logical type KNIME registers only in Java (a
    plug-in's cell type without a Python value factory), whose ``to_pyarrow`` raises ``ValueError``."""
    import pyarrow as pa

    if isinstance(ktype, knext.ListType):
        return pa.list_(_arrow_type(ktype.inner_type))
    if isinstance(ktype, knext.StructType):
        return pa.struct([(str(index), _arrow_type(inner)) for index, inner in enumerate(ktype.inner_types)])
    if isinstance(ktype, knext.LogicalType):
        try:
            return ktype.to_pyarrow()
        except ValueError:
            return pa.null()
    primitives = {
        knext.int32(): pa.int32(),
        knext.int64(): pa.int64(),
        knext.double(): pa.float64(),
        knext.bool_(): pa.bool_(),
        knext.string(): pa.string(),
    }
    return primitives.get(ktype, pa.null())
