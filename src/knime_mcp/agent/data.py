"""The agent's data repository: tables the model picks by id for tools, without ever seeing their data.

Layer: core, KNIME-free. The Agent Prompter fills it with its input tables; :mod:`knime_mcp.agent.workflow` gives its
tables to workflow tools and adds the tables they return; the agent's toolset adds the records of MCP results
(:mod:`knime_mcp.tools.records`). The model is told each table's id, name, description, columns (name and KNIME type)
and row count: all of them in the system message, and the new ones in the tool message that made them. Ids count up
from 0 in the order tables arrive, as in KNIME's own Agent Prompter, and hold for one run.

A table is held as it came: a pyarrow Table, or a table of the host (the node's ``knext.Table``), which this
module never opens. A :class:`TableHost` describes the host's tables and turns held pyarrow tables into host tables
when a workflow tool needs them; without one, only pyarrow tables are held.

    repository = DataRepository(host)
    sales = repository.add(table, name="input_table_1", description="Input table 1")
    repository.system_section()      # what the model is told
    repository.last(2)               # what the node outputs: the newest tables
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from knime_mcp.errors import ToolCallError

__all__ = [
    "DATA_INSTRUCTIONS",
    "Column",
    "DataRepository",
    "DataTable",
    "TableHost",
    "arrow_type_name",
    "collect_call_tables",
    "report_call_tables",
    "update_note",
]

DATA_INSTRUCTIONS = (
    "Data repository: some tools take tables as input or produce tables. Tables are kept in a data repository and "
    "referred to by id; you never see their data, only each table's id, name, description, columns (name and type) "
    "and number of rows. To give a table to a tool, pass its id for the tool's input port. Tools that produce "
    "tables add them to the repository, and their result lists the new tables with their ids: use those ids in "
    "later tool calls. Ids are valid for this run only; ids named in earlier runs of the conversation may now "
    "belong to other tables."
)
"""Opens the system message's data section."""

_MAX_COLUMNS_SHOWN = 60
"""Columns listed per table; a wider table is listed with a count of the rest, so one table cannot flood the model."""

_ARROW_TYPE_NAMES = {
    "int32": "Number (Integer)",
    "int64": "Number (Long Integer)",
    "double": "Number (Float)",
    "float": "Number (Float)",
    "bool": "Boolean",
    "string": "String",
    "large_string": "String",
}
"""pyarrow types by KNIME's names for them, as KNIME shows column types (and as workflow tools' port specs list)."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    """KNIME's name of the column's type: ``String``, ``Number (Integer)``, ``Number (Long Integer)``, ..."""


@dataclass(frozen=True, kw_only=True)
class DataTable:
    """One table of the repository, as the model knows it, and the table itself."""

    id: int
    name: str
    description: str
    columns: tuple[Column, ...]
    num_rows: int
    data: Any = field(repr=False, compare=False)
    """A pyarrow Table, or a table of the host."""

    def to_dict(self) -> dict[str, Any]:
        """What the model is told: everything but the data; very wide tables with the rest of the columns counted."""
        columns: list[dict[str, Any]] = [{"name": c.name, "type": c.type} for c in self.columns[:_MAX_COLUMNS_SHOWN]]
        shown = {"id": self.id, "name": self.name, "description": self.description, "rows": self.num_rows}
        hidden = len(self.columns) - len(columns)
        return {**shown, "columns": columns, **({"more_columns": hidden} if hidden > 0 else {})}

    def render(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


class TableHost(Protocol):
    """How the host (the Agent Prompter node) reads and makes its own tables."""

    def describe(self, table: Any) -> tuple[Sequence[tuple[str, str]], int]:
        """The table's columns as ``(name, type name)`` and its number of rows."""
        ...

    def from_arrow(self, table: Any) -> Any:
        """A host table with the content of the pyarrow Table ``table``."""
        ...


class DataRepository:
    """The tables of one agent run; tables may be added from several threads at once."""

    def __init__(self, host: TableHost | None = None) -> None:
        self._host = host
        self._tables: list[DataTable] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    @property
    def tables(self) -> list[DataTable]:
        with self._lock:
            return list(self._tables)

    def add(self, data: Any, *, name: str, description: str = "") -> DataTable:
        """Hold ``data`` under the next id. A host table is described by the host, in the caller's thread."""
        columns, num_rows = self._describe(data)
        with self._lock:
            table = DataTable(
                id=len(self._tables),
                name=name,
                description=description,
                columns=tuple(Column(str(n), str(t)) for n, t in columns),
                num_rows=num_rows,
                data=data,
            )
            self._tables.append(table)
        return table

    def get(self, table_id: Any) -> DataTable:
        """The table with id ``table_id``; a :class:`ToolCallError` the model can act on when there is none."""
        if isinstance(table_id, float) and table_id.is_integer():
            table_id = int(table_id)  # JSON Schema counts 1.0 as an integer, and so do some models
        with self._lock:
            count = len(self._tables)
            found = self._tables[table_id] if _is_id(table_id) and table_id < count else None
        if found is None:
            held = f"the ids are 0 to {count - 1}" if count else "it holds no tables yet"
            raise ToolCallError(
                f"The data repository has no table with id {table_id!r}: {held}.",
                hint="Pass the id of a table listed in the data repository or in a tool result.",
            )
        return found

    def last(self, count: int) -> list[DataTable]:
        """The ``count`` newest tables, oldest first (fewer when there are fewer): what KNIME's node outputs."""
        with self._lock:
            return list(self._tables[-count:]) if count > 0 else []

    def host_table(self, table: DataTable) -> Any:
        """The table in the host's form (what a workflow tool is given); call in the host's thread."""
        if self._host is not None and _is_arrow(table.data):
            return self._host.from_arrow(table.data)
        return table.data

    def system_section(self) -> str:
        """The system message's data section: how to use ids, and every table held now."""
        tables = self.tables
        listed = "\n".join(table.render() for table in tables) if tables else "No tables yet: tools may produce some."
        return f"{DATA_INSTRUCTIONS}\nTables in the data repository:\n{listed}"

    def _describe(self, data: Any) -> tuple[Sequence[tuple[str, str]], int]:
        if _is_arrow(data):
            return [(f.name, arrow_type_name(f.type)) for f in data.schema], data.num_rows
        if self._host is None:
            raise TypeError(f"Without a table host the data repository holds only pyarrow Tables, not {type(data)}")
        return self._host.describe(data)


_CALL_TABLES: ContextVar[list[DataTable] | None] = ContextVar("knime_mcp_call_tables", default=None)
"""The tables the running tool call has added, while :func:`collect_call_tables` collects them."""


@contextmanager
def collect_call_tables() -> Iterator[list[DataTable]]:
    """The tables a tool call reports with :func:`report_call_tables` while the block runs. The agent's toolset
    collects them per call and names them in a note it attaches after capping the tool's output, so that a long
    output cannot cut the ids of the new tables off."""
    added: list[DataTable] = []
    token = _CALL_TABLES.set(added)
    try:
        yield added
    finally:
        _CALL_TABLES.reset(token)


def report_call_tables(tables: Sequence[DataTable]) -> None:
    """Report tables the running tool call added to its collector (none outside :func:`collect_call_tables`). Call it
    in the call's own task, not in a worker thread: context variables do not cross into other threads."""
    collected = _CALL_TABLES.get()
    if collected is not None:
        collected.extend(tables)


def update_note(tables: Sequence[DataTable]) -> str:
    """The part of a tool message that tells the model about the tables the call added."""
    listed = "\n".join(table.render() for table in tables)
    return f"Data repository update: this call added {len(tables)} table(s), usable by their ids:\n{listed}"


def arrow_type_name(arrow_type: Any) -> str:
    """KNIME's name for a pyarrow type; lists as KNIME names them, anything else by pyarrow's name."""
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"List (Collection of: {arrow_type_name(arrow_type.value_type)})"
    return _ARROW_TYPE_NAMES.get(str(arrow_type), str(arrow_type))


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_arrow(data: Any) -> bool:
    return type(data).__module__.startswith("pyarrow") and type(data).__name__ == "Table"
