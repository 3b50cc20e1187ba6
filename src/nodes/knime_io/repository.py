"""KNIME I/O: the agent nodes' tables in KNIME: the tool-call log's spec, and the data repository's KNIME side
(describing tables, making tables of the core's records, filling the *Data outputs* ports)."""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from nodes.knime_io.tables import knime_columns

__all__ = ["KnimeTables", "data_output_tables", "has_ports", "log_schema"]


def log_schema() -> knext.Schema:
    """The *Tool calls* output's columns."""
    from knime_mcp.agent.call_log import LOG_COLUMNS

    return knext.Schema.from_columns(knime_columns(LOG_COLUMNS))


class KnimeTables:
    """The data repository's view of KNIME tables: their columns as KNIME names their types, and tables made from
    the pyarrow tables the core holds (records of MCP results) when a workflow tool needs them."""

    def describe(self, table: knext.Table) -> tuple[list[tuple[str, str]], int]:
        return [(column.name, _type_name(column)) for column in table.schema], table.num_rows

    def from_arrow(self, table: Any) -> knext.Table:
        return knext.Table.from_pyarrow(table)


def _type_name(column: knext.Column) -> str:
    """The type as KNIME shows it (and as workflow tools' port specs name it)."""
    shown = (column.metadata or {}).get("displayed_column_type")
    return str(shown) if shown else str(column.ktype)


def has_ports(tool: Any) -> bool:
    """A workflow tool that takes or makes tables: with one, the model is told about the data repository."""
    return bool(getattr(tool, "input_ports", None) or getattr(tool, "output_ports", None))


def data_output_tables(repository: Any, count: int) -> list[knext.Table]:
    """The ``count`` newest tables, oldest first, then empty tables for the ports left over (as KNIME's node)."""
    import pandas as pd

    newest = [_as_knime(table.data) for table in repository.last(count)]
    return newest + [knext.Table.from_pandas(pd.DataFrame()) for _ in range(count - len(newest))]


def _as_knime(data: Any) -> knext.Table:
    return data if isinstance(data, knext.Table | knext.BatchOutputTable) else knext.Table.from_pyarrow(data)
