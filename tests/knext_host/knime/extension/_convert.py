"""How the host's tables become Arrow data as KNIME's Arrow backend writes it, for ``_table``.

Mirrored from the runtime (knext-api 6.4-6.6): RowID rules of ``from_pandas``/``from_pyarrow``; a column KNIME's
Python tables cannot write raises ``ValueError`` ("Data type '<Arrow type>' in column '<name>' is not supported in
KNIME Python. ..."): from pandas int8/int16, unsigned, bytes and dict columns, from pyarrow binary (also
``large_binary``, in lists too), struct, and foreign extension types; PNG image cells (``_png``); sentinels of
integer columns; the metadata KNIME attaches to input columns. Stricter than the runtime, because KNIME fails later
at its Java boundary anyway: duplicate RowIDs (``ValueError``) and duplicate column names (``RuntimeError``) are
rejected when a table is built; also stricter: float32 and dictionary-encoded pyarrow columns (KNIME converts them).
Date/time columns fail here (``ValueError``): KNIME's date/time types are not registered. pandas and pyarrow are
imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knime.extension import _schema as ks

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_ROW_ID = "<RowID>"
_ROW_ID_MODES = ("auto", "keep", "generate")


def _pa() -> Any:
    import pyarrow

    return pyarrow


def _arrow_from_pandas(data: pd.DataFrame, row_ids: str, first_row: int = 0) -> pa.Table:
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"Table.from_pandas expects a pandas.DataFrame, but got {type(data)}")
    if row_ids not in _ROW_ID_MODES:
        raise ValueError('row_ids must be one of ["auto", "keep", "generate"]')
    names = [str(c) for c in data.columns]
    arrays = [_array_from_series(data.iloc[:, i], names[i]) for i in range(data.shape[1])]
    if row_ids == "generate":
        ids = [f"Row{first_row + i}" for i in range(len(data))]
    elif row_ids == "auto" and pd.api.types.is_integer_dtype(data.index.dtype):
        ids = [f"Row{v}" for v in data.index]
    else:
        ids = [str(v) for v in data.index]
    return _assemble(_pa().array(ids, _pa().string()), arrays, names)


def _array_from_series(series: pd.Series, name: str) -> pa.Array:
    """Convert one column as KNIME's pandas bridge does, rejecting what KNIME rejects."""
    from knime.extension._png import is_image, is_png_type, png_cells

    pa = _pa()
    present = series.dropna()
    if series.dtype == object and len(present) and is_image(present.iloc[0]):
        return png_cells(series.astype(object).where(series.notna(), None))
    array = pa.Array.from_pandas(series)
    if is_png_type(array.type):
        return array
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array.cast(_pandas_target_type(array.type, _unsupported(array.type, name)))


def _unsupported(dtype: pa.DataType, name: str) -> ValueError:
    return ValueError(
        f"Data type '{dtype}' in column '{name}' is not supported in KNIME Python. Please use a different data type."
    )


def _pandas_target_type(dtype: pa.DataType, unsupported: Exception) -> pa.DataType:
    pa = _pa()
    if dtype in (pa.int32(), pa.int64(), pa.float64(), pa.bool_(), pa.string(), pa.null()):
        return dtype
    if dtype == pa.float32():
        return pa.float64()
    if dtype == pa.large_string():
        return pa.string()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(_pandas_target_type(dtype.value_type, unsupported))
    if pa.types.is_temporal(dtype):
        raise ValueError(f"{dtype} columns need KNIME's date and time types, which this headless host lacks")
    raise unsupported


def _arrow_from_pyarrow(data: pa.Table, row_ids: str, first_row: int = 0) -> pa.Table:
    pa = _pa()
    if not isinstance(data, pa.Table):
        raise TypeError(f"Table.from_pyarrow expects a pyarrow.Table, but got {type(data)}")
    if row_ids not in _ROW_ID_MODES:
        raise ValueError('row_ids must be one of ["auto", "generate", "keep"]')
    _check_batch_sizes(data)
    first = data.schema[0] if data.num_columns else None
    has_id_column = first is not None and first.name == _ROW_ID
    if row_ids == "keep" or (row_ids == "auto" and has_id_column and pa.types.is_string(first.type)):
        if first is None or not pa.types.is_string(first.type):
            raise TypeError("row_ids='keep' requires a string RowID column as first column")
        ids, rest = data.column(0).combine_chunks(), data.drop_columns([data.column_names[0]])
    elif row_ids == "auto" and has_id_column and pa.types.is_integer(first.type):
        ids = pa.array([f"Row{v}" for v in data.column(0).to_pylist()], pa.string())
        rest = data.drop_columns([_ROW_ID])
    else:
        ids, rest = pa.array([f"Row{first_row + i}" for i in range(data.num_rows)], pa.string()), data
    for field in rest.schema:
        if not _writable(field.type):
            raise _unsupported(field.type, field.name)
    return _assemble(ids, [c.combine_chunks() for c in rest.columns], rest.column_names)


def _check_batch_sizes(data: pa.Table) -> None:
    sizes = [b.num_rows for b in data.to_batches()]
    if sizes and (any(s != sizes[0] for s in sizes[:-1]) or sizes[-1] > sizes[0]):
        raise ValueError(f"All batches of the table must have the same size except a smaller last one, got {sizes}")


def _assemble(ids: pa.Array, arrays: list[pa.Array], names: list[str]) -> pa.Table:
    pa = _pa()
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise RuntimeError(f"Duplicate column names detected: {duplicates}")
    data = pa.table([ids, *arrays], names=[_ROW_ID, *names])
    _check_unique_row_ids(data, set())
    return data


def _check_unique_row_ids(data: pa.Table, seen: set[str]) -> None:
    for row_id in data.column(0).to_pylist():
        if row_id in seen:
            raise ValueError(f"Duplicate RowID '{row_id}': KNIME requires unique RowIDs")
        seen.add(row_id)


def _primitive_types() -> dict[pa.DataType, ks.KnimeType]:
    pa = _pa()
    return {
        pa.int32(): ks.int32(),
        pa.int64(): ks.int64(),
        pa.float64(): ks.double(),
        pa.bool_(): ks.bool_(),
        pa.string(): ks.string(),
        pa.null(): ks.null(),
    }


def _writable(dtype: pa.DataType) -> bool:
    """Whether KNIME's Python tables write a pyarrow column of this type: primitives, PNG cells, lists of them."""
    from knime.extension._png import is_png_type

    pa = _pa()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _writable(dtype.value_type)
    return is_png_type(dtype) or (not isinstance(dtype, pa.ExtensionType) and dtype in _primitive_types())


def _knime_type(dtype: pa.DataType) -> ks.KnimeType:
    """The KNIME type of a column the host wrote (see ``_writable``), as KNIME's Arrow backend maps it."""
    from knime.extension._png import is_png_type

    pa = _pa()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return ks.list_(_knime_type(dtype.value_type))
    if is_png_type(dtype):
        return ks.registered_logical_type("PIL.Image.Image")
    return _primitive_types()[dtype]


def _is_int(dtype: pa.DataType) -> bool:
    return dtype in (_pa().int32(), _pa().int64())


def _sentinel_value(sentinel: str | int, dtype: pa.DataType) -> int:
    bits = 31 if dtype == _pa().int32() else 63
    if sentinel == "min":
        return -(2**bits)
    if sentinel == "max":
        return 2**bits - 1
    if isinstance(sentinel, int) and not isinstance(sentinel, bool):
        return sentinel
    raise ValueError(f"sentinel must be 'min', 'max' or an int, got {sentinel!r}")


def _with_sentinel(data: pa.Table, sentinel: str | int | None) -> pa.Table:
    """Turn the sentinel value of integer columns into missing values."""
    if sentinel is None:
        return data
    import pyarrow.compute as pc

    def missing(column: pa.ChunkedArray) -> pa.ChunkedArray:
        is_sentinel = pc.equal(column, _sentinel_value(sentinel, column.type))
        return pc.if_else(is_sentinel, _pa().scalar(None, column.type), column)

    columns = [missing(c) if _is_int(c.type) else c for c in data.columns]
    return _pa().Table.from_arrays(columns, schema=data.schema)


_VALUE_CLASSES = {
    "Number (Integer)": "org.knime.core.data.IntValue",
    "Number (Long Integer)": "org.knime.core.data.LongValue",
    "Number (Float)": "org.knime.core.data.DoubleValue",
    "Boolean": "org.knime.core.data.BooleanValue",
    "String": "org.knime.core.data.StringValue",
    "PNG Image": "org.knime.core.data.image.png.PNGImageValue",
}


def _column_metadata(ktype: ks.KnimeType) -> dict[str, str]:
    """Metadata KNIME attaches to input columns (class names approximated; their presence is what matters)."""
    value_class = _VALUE_CLASSES.get(str(ktype), "org.knime.core.data.DataValue")
    return {"preferred_value_type": value_class, "displayed_column_type": str(ktype)}
