"""``Table`` and ``BatchOutputTable`` with the KNIME runtime's Arrow-backend semantics (not ktest's).

Mirrored from the runtime (knext-api 6.4-6.6): ``to_pandas`` returns RowIDs as index named ``"<RowID>"`` and
strings as ``string[python]``; ``to_pyarrow`` starts with a ``"<RowID>"`` column; PNG image cells (``_png``);
``batches()`` works only on source tables (those KNIME hands to ``execute``); ``Table()`` is abstract
(``TypeError``); ``BatchOutputTable`` offers only ``append``/``num_batches``. How ``from_pandas``/``from_pyarrow``
and ``append`` turn data into the host's Arrow tables (RowID rules, the columns KNIME cannot write, duplicates) is in
``_convert``. pandas and pyarrow are imported lazily, as in KNIME, so ``import knime.extension`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from knime.extension import _schema as ks
from knime.extension._convert import (
    _ROW_ID,
    _arrow_from_pandas,
    _arrow_from_pyarrow,
    _check_unique_row_ids,
    _column_metadata,
    _is_int,
    _knime_type,
    _pa,
    _sentinel_value,
    _with_sentinel,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


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
