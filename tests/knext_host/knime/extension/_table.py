"""``Table`` and ``BatchOutputTable`` with the KNIME runtime's Arrow-backend semantics (not ktest's).

Mirrored from the runtime (knext-api 6.4-6.6): RowID rules of ``from_pandas``/``from_pyarrow``; ``to_pandas``
returns RowIDs as index named ``"<RowID>"`` and strings as ``string[python]``; ``to_pyarrow`` starts with a
``"<RowID>"`` column; PNG image cells (``_png``); a column KNIME's Python tables cannot write raises ``ValueError``
("Data type '<Arrow type>' in column '<name>' is not supported in KNIME Python. ..."): from pandas int8/int16,
unsigned, bytes and dict columns, from pyarrow binary (also ``large_binary``, in lists too), struct, and foreign
extension types; ``batches()`` works only on source tables (those KNIME hands to ``execute``); ``Table()`` is
abstract (``TypeError``); ``BatchOutputTable`` offers only ``append``/``num_batches``. Stricter than the runtime,
because KNIME fails later at its Java boundary anyway: duplicate RowIDs (``ValueError``) and duplicate column names
(``RuntimeError``) are rejected when a table is built; also stricter: float32 and dictionary-encoded pyarrow columns
(KNIME converts them). Date/time columns fail here (``ValueError``): KNIME's date/time types are not registered.
pandas and pyarrow are imported lazily, as in KNIME, so ``import knime.extension`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from knime.extension import _schema as ks

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_ROW_ID = "<RowID>"
_ROW_ID_MODES = ("auto", "keep", "generate")


class Table:
    """A KNIME table; create it with ``from_pandas`` or ``from_pyarrow``."""

    _data: pa.Table

    def __init__(self) -> None:
        raise TypeError("Can't instantiate abstract class Table; use Table.from_pandas or Table.from_pyarrow")

    @classmethod
    def _wrap(cls, data: pa.Table) -> Table:
        table = object.__new__(cls)
        table._data = data
        return table

    @staticmethod
    def from_pandas(data: pd.DataFrame, sentinel: str | int | None = None, row_ids: str = "auto") -> Table:
        return _backend.create_table_from_pandas(data, sentinel, row_ids)  # type: ignore[union-attr]

    @staticmethod
    def from_pyarrow(data: pa.Table, sentinel: str | int | None = None, row_ids: str = "auto") -> Table:
        return _backend.create_table_from_pyarrow(data, sentinel, row_ids)  # type: ignore[union-attr]

    @property
    def num_rows(self) -> int:
        return self._data.num_rows

    @property
    def num_columns(self) -> int:
        return self._data.num_columns - 1

    @property
    def column_names(self) -> list[str]:
        return self._data.column_names[1:]

    @property
    def shape(self) -> tuple[int, int]:
        return (self.num_columns, self.num_rows)

    @property
    def schema(self) -> ks.Schema:
        fields = list(self._data.schema)[1:]
        return ks.Schema([_knime_type(f.type) for f in fields], [f.name for f in fields])

    def to_pyarrow(self, sentinel: str | int | None = None) -> pa.Table:
        if _ROW_ID in self.column_names:
            raise RuntimeError(f"A data column must not be named '{_ROW_ID}'")
        if sentinel is None:
            return self._data
        import pyarrow.compute as pc

        columns = [
            pc.fill_null(c, _sentinel_value(sentinel, c.type)) if _is_int(c.type) else c for c in self._data.columns
        ]
        return _pa().Table.from_arrays(columns, schema=self._data.schema)

    def to_pandas(self, sentinel: str | int | None = None) -> pd.DataFrame:
        import pandas as pd

        data = self.to_pyarrow(sentinel)
        strings = pd.StringDtype("python")

        def values(column: pa.ChunkedArray) -> Any:
            from knime.extension._png import images, is_png_type

            if column.type == _pa().string():
                return pd.array(column.to_pylist(), dtype=strings)
            return images(column) if is_png_type(column.type) else column.to_numpy()

        columns = {name: values(column) for name, column in zip(data.column_names[1:], data.columns[1:])}
        return pd.DataFrame(columns, index=pd.Index(data.column(0).to_pylist(), dtype=strings, name=_ROW_ID))

    def batches(self) -> Iterator[Table]:
        raise RuntimeError(
            "Retrieving batches is only allowed for unmodified tables that were passed into execute(); "
            "tables created with from_pandas or from_pyarrow have no batches"
        )

    def to_batches(self) -> Iterator[Table]:
        return self.batches()

    def __repr__(self) -> str:
        return f"Table[shape={self.shape}]"


class _SourceTable(Table):
    """A table as KNIME passes it into ``execute``: batched, with metadata on every schema column.

    ``_num_batches`` batches of ``_batch_size`` rows (the last may be shorter, even empty). A table without rows may
    have no batch at all, and then, as in KNIME, ``to_pyarrow``/``to_pandas`` fail: pyarrow cannot build a column
    from no chunks."""

    _batch_size: int
    _num_batches: int

    @property
    def schema(self) -> ks.Schema:
        return ks.Schema.from_columns([ks.Column(c.ktype, c.name, _column_metadata(c.ktype)) for c in super().schema])

    @property
    def num_batches(self) -> int:
        return self._num_batches

    def batches(self) -> Iterator[Table]:
        for index in range(self._num_batches):
            yield Table._wrap(self._data.slice(index * self._batch_size, self._batch_size))

    def to_pyarrow(self, sentinel: str | int | None = None) -> pa.Table:
        if not self._num_batches:
            raise _pa().ArrowInvalid("cannot construct ChunkedArray from empty vector and omitted type")
        return super().to_pyarrow(sentinel)


class BatchOutputTable:
    """An output table written batch by batch; see ``create`` and ``from_batches``."""

    def __init__(self) -> None:
        raise RuntimeError("Use BatchOutputTable.create() or BatchOutputTable.from_batches()")

    @staticmethod
    def create(row_ids: str = "keep") -> BatchOutputTable:
        return _backend.create_batch_output_table(row_ids)  # type: ignore[union-attr]

    @staticmethod
    def from_batches(generator: Iterable[Any], row_ids: str = "generate") -> BatchOutputTable:
        out = BatchOutputTable.create(row_ids)
        for batch in generator:
            out.append(batch)
        return out

    @classmethod
    def _new(cls, row_ids: str) -> BatchOutputTable:
        if row_ids not in ("keep", "generate"):
            raise ValueError('row_ids must be one of ["keep", "generate"]')
        out = object.__new__(cls)
        out._row_ids, out._batches, out._seen_ids = row_ids, [], set()
        return out

    def append(self, batch: Table | pd.DataFrame | pa.Table | pa.RecordBatch) -> None:
        """First batch defines the columns; every batch but the last must have the first one's size."""
        data = self._to_arrow(batch)
        if self._batches:
            first = self._batches[0]
            if data.schema != first.schema:
                raise ValueError(f"Batch columns {data.schema} do not match the first batch's {first.schema}")
            if self._batches[-1].num_rows != first.num_rows:
                raise ValueError("All batches except the last one must have the same number of rows")
        _check_unique_row_ids(data, self._seen_ids)
        self._batches.append(data)

    def _to_arrow(self, batch: Any) -> pa.Table:
        import pandas as pd

        pa = _pa()
        first_row = sum(b.num_rows for b in self._batches)
        if isinstance(batch, (pa.Table, pa.RecordBatch)):
            return _arrow_from_pyarrow(pa.table(batch), self._row_ids, first_row)
        if isinstance(batch, Table) and self._row_ids == "generate":
            return _arrow_from_pyarrow(batch._data.drop_columns([_ROW_ID]), "generate", first_row)
        if isinstance(batch, Table):
            return batch._data
        if isinstance(batch, pd.DataFrame):
            return _arrow_from_pandas(batch, self._row_ids, first_row)
        raise TypeError(
            "Can only append batches of type knime.api.Table, pyarrow.Table, pyarrow.RecordBatch, "
            f"pandas.DataFrame but got {type(batch)}"
        )

    @property
    def num_batches(self) -> int:
        return len(self._batches)

    # The three members below exist only in ktest (knime.extension.testing), not in KNIME: for test inspection.
    @property
    def num_rows(self) -> int:
        return sum(b.num_rows for b in self._batches)

    @property
    def column_names(self) -> list[str]:
        return self._batches[0].column_names[1:] if self._batches else []

    def to_pandas(self, sentinel: str | int | None = None) -> pd.DataFrame:
        import pandas as pd

        return pd.concat([Table._wrap(b).to_pandas(sentinel) for b in self._batches])


class _HostTableBackend:
    """Table factory installed by ``knime.extension.testing`` (without it, ``Table.from_pandas`` fails)."""

    def create_table_from_pandas(self, data: pd.DataFrame, sentinel: str | int | None, row_ids: str) -> Table:
        return Table._wrap(_with_sentinel(_arrow_from_pandas(data, row_ids), sentinel))

    def create_table_from_pyarrow(self, data: pa.Table, sentinel: str | int | None, row_ids: str) -> Table:
        return Table._wrap(_with_sentinel(_arrow_from_pyarrow(data, row_ids), sentinel))

    def create_batch_output_table(self, row_ids: str) -> BatchOutputTable:
        return BatchOutputTable._new(row_ids)


_backend: _HostTableBackend | None = None


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
    if is_image(next((value for value in series if value is not None), None)):
        return png_cells(series)
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
