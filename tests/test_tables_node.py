"""The nodes' table readers (``nodes._tables``) on a column type Python does not know.

A table without rows is read from its schema (KNIME may hand it over without a batch), each column's Arrow type
taken from its KNIME type. A column of a type KNIME registers only in Java (a plug-in's cell type without a Python
value factory) has a ``LogicalType`` whose ``to_pyarrow`` raises ``ValueError``; such a column is read as a column of
missing values (Arrow null) rather than failing the node. On KNIME's real API the type is built as KNIME's schema
holds such a column: a ``LogicalType`` naming a Java value factory no Python module registers. The headless stand-in
has no such types, so there it is a ``LogicalType`` whose ``to_pyarrow`` fails with KNIME's message. The table is a
minimal one: a schema and no rows, which is all the readers look at for a table without rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import knime.extension as knext
import pyarrow as pa
import pytest

import knext_bootstrap
from nodes.knime_io.tables import arrow_batches, read_pandas, read_pyarrow

pytestmark = pytest.mark.knime_node

JAVA_VALUE_FACTORY = '{"value_factory_class":"org.knime.mcp.test.JavaOnlyValueFactory"}'


def _java_only_type() -> knext.KnimeType:
    if knext_bootstrap.REAL_KNIME:
        return knext.LogicalType(JAVA_VALUE_FACTORY, knext.string())

    class JavaOnlyType(knext.LogicalType):
        def to_pyarrow(self) -> pa.DataType:
            raise ValueError(
                f"The logical type {JAVA_VALUE_FACTORY} is not compatible with any registered Python value factory."
            )

    return JavaOnlyType(JAVA_VALUE_FACTORY, "Java Only")


@dataclass
class EmptyTable:
    """A table without rows and batches, as KNIME may hand one over: only its schema is there."""

    schema: knext.Schema
    num_rows: int = 0
    column_names: tuple[str, ...] = ()

    def batches(self) -> list[object]:
        return []


def test_an_empty_table_with_a_column_of_a_java_only_type_is_read_with_that_column_as_missing_values() -> None:
    java_only = _java_only_type()
    with pytest.raises(ValueError, match="registered Python value factory"):
        java_only.to_pyarrow()
    columns = [
        knext.Column(knext.string(), "Name"),
        knext.Column(java_only, "Molecule"),
        knext.Column(knext.list_(java_only), "Molecules"),
    ]
    schema = knext.Schema.from_columns(columns)
    table = EmptyTable(schema, column_names=tuple(schema.column_names))

    arrow = read_pyarrow(table)  # type: ignore[arg-type]
    assert arrow.num_rows == 0 and arrow.column_names == ["<RowID>", "Name", "Molecule", "Molecules"]
    assert [field.type for field in arrow.schema][1:] == [pa.string(), pa.null(), pa.list_(pa.null())]
    assert [batch.schema for batch in arrow_batches(table)] == [arrow.schema]  # type: ignore[arg-type]
    assert list(read_pandas(table).columns) == ["Name", "Molecule", "Molecules"]  # type: ignore[arg-type]
