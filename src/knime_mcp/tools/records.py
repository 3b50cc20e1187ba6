"""JSON records to a table: the structured result of an MCP tool as rows and columns a KNIME table can hold.

Layer: pure functions under :mod:`knime_mcp.agent.data` (the agent's data repository), with no I/O. Records are a JSON
array of objects, or an object holding exactly one such array (``{"items": [...], "total": 3}``); anything else is
not tabular and gives ``None``. Each key becomes a column, in the order keys first appear; a column whose values are
all integers, all numbers, all booleans or all strings keeps that type, any other column holds JSON text, and a
missing key is a missing value. Column names are the keys, except that KNIME's reserved ``<RowID>`` becomes
``<RowID> (data)``, a blank key ``Column <n>`` (its position), and a name an earlier column already has gets KNIME's
numbered suffix (``name (#1)``), so no key's values are lost.

    records_table({"items": [{"sku": "A-1", "quantity": 2}, {"sku": "B-7", "quantity": 1}]})
    # pyarrow.Table: sku (string), quantity (int64), 2 rows
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.columns import ROW_ID_COLUMN

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["find_records", "records_table"]

_INT64 = (-(2**63), 2**63 - 1)


def find_records(value: Any) -> list[Mapping[str, Any]] | None:
    """The records in ``value``: the array itself, or the one array of objects an object holds; else None."""
    if _is_records(value):
        return list(value)
    if isinstance(value, Mapping):
        arrays = [item for item in value.values() if _is_records(item)]
        if len(arrays) == 1:
            return list(arrays[0])
    return None


def records_table(value: Any) -> pa.Table | None:
    """The records in ``value`` (see :func:`find_records`) as a pyarrow Table, or None when there are none."""
    import pyarrow as pa

    records = find_records(value)
    if records is None:
        return None
    keys: dict[str, None] = {}
    for record in records:
        keys.update(dict.fromkeys(str(key) for key in record))
    names: list[str] = []
    for number, key in enumerate(keys, start=1):
        names.append(_unique(_column_name(key, number), set(names)))
    values = [[record.get(key) for record in records] for key in keys]
    return pa.table([_column(column) for column in values], names=names)


def _is_records(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and len(value) > 0
        and all(isinstance(item, Mapping) for item in value)
    )


def _column_name(name: str, number: int) -> str:
    if not name.strip():
        return f"Column {number}"
    return f"{name} (data)" if name == ROW_ID_COLUMN else name


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or when an earlier column has it, ``name (#1)``, ``name (#2)``, ... as KNIME numbers duplicates."""
    number = 0
    unique = name
    while unique in taken:
        number += 1
        unique = f"{name} (#{number})"
    return unique


def _column(values: list[Any]) -> pa.Array:
    import pyarrow as pa

    present = [value for value in values if value is not None]
    if present and all(isinstance(value, bool) for value in present):
        return pa.array(values, pa.bool_())
    if present and all(_is_int(value) for value in present):
        return pa.array(values, pa.int64())
    if present and all(_is_int(value) or isinstance(value, float) for value in present):
        return pa.array([None if value is None else float(value) for value in values], pa.float64())
    return pa.array([None if value is None else _text(value) for value in values], pa.string())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
