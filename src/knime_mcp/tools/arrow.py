"""The table forms of MCPTool: an Arrow extension column, and the JSON column KNIME tables hold.

Sits at the edge between the core's :class:`MCPTool` values and tables: the provider writes the tools table, the
caller, the agent and the CLI read it back. Both forms have the same columns (:data:`COLUMNS`): the tool itself in
"MCP Tool", then flat columns for people to read (notes joined by new lines, the server by its display name).

- Arrow (:func:`tools_to_arrow`): "MCP Tool" is the registered extension type :class:`MCPToolType`, a struct with
  schemas as JSON text. It survives IPC streams and Parquet in any process that imported this module, and
  ``table.to_pandas()`` turns it into a column of MCPTool objects.
- KNIME (:func:`tools_to_table`, or :func:`tools_to_frame` in pandas): a pure-Python extension cannot add a column
  type, so "MCP Tool" holds each tool's ``to_json()`` as a string.

Conversion is column-wise (one list per field, no per-row Arrow scalars), and each tool's schemas are serialised
once for all the columns that show them: a provider lists thousands of tools.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
from pydantic_core import from_json

from knime_mcp.errors import ConfigError
from knime_mcp.http.operation import HttpOperation
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from knime_mcp.tools.tool_cells import TableReader, TableServer, ToolWriter, tool_cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BOOL_COLUMNS",
    "COLUMNS",
    "EXTENSION_NAME",
    "TOOL_COLUMN",
    "MCPToolArray",
    "MCPToolScalar",
    "MCPToolType",
    "register_mcp_tool_type",
    "tools_from_arrow",
    "tools_from_frame",
    "tools_to_arrow",
    "tools_to_frame",
    "tools_to_table",
    "write_tools",
]

EXTENSION_NAME = "knime_mcp.mcp_tool"
TOOL_COLUMN = "MCP Tool"

_STORAGE = pa.struct(
    [
        pa.field("name", pa.string(), nullable=False),
        pa.field("tool_name", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("description", pa.string(), nullable=False),
        pa.field("input_schema", pa.string(), nullable=False),
        pa.field("parameter_schema", pa.string(), nullable=False),
        pa.field("output_schema", pa.string()),
        pa.field("read_only", pa.bool_(), nullable=False),
        pa.field("destructive", pa.bool_(), nullable=False),
        pa.field("idempotent", pa.bool_(), nullable=False),
        pa.field("open_world", pa.bool_(), nullable=False),
        pa.field("server", pa.string(), nullable=False),
        pa.field("notes", pa.list_(pa.string()), nullable=False),
        pa.field("annotated", pa.bool_()),
        pa.field("task_support", pa.string()),
        pa.field("seal", pa.string()),
        pa.field("http", pa.string()),
    ]
)
"""The struct behind the extension type: schemas and the server as JSON text, so any reader can take them."""

_BOOL_KEYS = frozenset(field.name for field in _STORAGE if field.type == pa.bool_())

_FLAT: tuple[tuple[str, str], ...] = (
    ("Name", "name"),
    ("Title", "title"),
    ("Description", "description"),
    ("Input Schema", "input_schema"),
    ("Output Schema", "output_schema"),
    ("Read-only", "read_only"),
    ("Destructive", "destructive"),
    ("Idempotent", "idempotent"),
    ("Open-world", "open_world"),
    ("Server", "server_name"),
    ("Notes", "notes_text"),
)
"""The readable columns after "MCP Tool": (column name, key of the encoded lists)."""

COLUMNS: tuple[str, ...] = (TOOL_COLUMN, *(column for column, _ in _FLAT))
"""The column names of a tools table, in order, in both forms."""

BOOL_COLUMNS = frozenset(column for column, key in _FLAT if key in _BOOL_KEYS)
"""The columns of a tools table that hold booleans; the others hold text (the MCP Tool column too, in KNIME)."""

_NOT_TOOLS_HINT = "Connect the MCP Tool Provider's output table, or choose the column that holds its MCP tools."


class MCPToolType(pa.ExtensionType):
    """The Arrow type of a column of MCP tools."""

    def __init__(self) -> None:
        super().__init__(_STORAGE, EXTENSION_NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> MCPToolType:
        return cls()

    def __arrow_ext_class__(self) -> type[MCPToolArray]:
        return MCPToolArray

    def __arrow_ext_scalar_class__(self) -> type[MCPToolScalar]:
        return MCPToolScalar

    def to_pandas_dtype(self) -> Any:
        return _pandas_dtype()()


class MCPToolArray(pa.ExtensionArray):
    """A chunk of an "MCP Tool" column."""

    def to_tools(self) -> list[MCPTool]:
        return _decode_struct(self.storage, TOOL_COLUMN)


class MCPToolScalar(pa.ExtensionScalar):
    """One cell of an "MCP Tool" column; ``as_py()`` is the MCPTool."""

    def as_py(self, **kwargs: Any) -> MCPTool | None:
        if self.value is None:
            return None
        row = self.value.as_py()
        return _decode({"seal": [None], **{key: [value] for key, value in row.items()}}, TOOL_COLUMN)[0]


def register_mcp_tool_type() -> None:
    """Register the extension type with pyarrow, replacing an earlier registration (a module reload's)."""
    try:
        pa.unregister_extension_type(EXTENSION_NAME)
    except KeyError:
        pass  # Nothing registered yet: the usual case.
    pa.register_extension_type(MCPToolType())


register_mcp_tool_type()


@cache
def _pandas_dtype() -> type:
    """A pandas dtype whose columns hold MCPTool objects; pandas is imported on first conversion.

    Its array is a small ExtensionArray of its own: pandas unwraps its numpy-backed one into a plain block, which
    pandas before 2.1 then rejects for one column."""
    import numpy as np
    import pandas as pd
    from pandas.api.extensions import ExtensionArray, ExtensionDtype, take

    class MCPToolDtype(ExtensionDtype):
        name = EXTENSION_NAME
        type = MCPTool

        @classmethod
        def construct_array_type(cls) -> type:
            return MCPToolPandasArray

        def __from_arrow__(self, array: pa.Array | pa.ChunkedArray) -> MCPToolPandasArray:
            return MCPToolPandasArray._from_sequence(_tools_of(array, TOOL_COLUMN))

    class MCPToolPandasArray(ExtensionArray):
        def __init__(self, cells: np.ndarray) -> None:
            self._cells = cells

        @classmethod
        def _from_sequence(cls, scalars: Sequence[Any], *, dtype: Any = None, copy: bool = False) -> MCPToolPandasArray:
            cells = np.empty(len(scalars), dtype=object)
            cells[:] = list(scalars)
            return cls(cells)

        @classmethod
        def _from_factorized(cls, values: np.ndarray, original: MCPToolPandasArray) -> MCPToolPandasArray:
            return cls._from_sequence(values)

        @classmethod
        def _concat_same_type(cls, to_concat: Sequence[MCPToolPandasArray]) -> MCPToolPandasArray:
            return cls(np.concatenate([array._cells for array in to_concat]))

        @property
        def dtype(self) -> MCPToolDtype:
            return MCPToolDtype()

        @property
        def nbytes(self) -> int:
            return self._cells.nbytes

        def __len__(self) -> int:
            return len(self._cells)

        def __getitem__(self, item: Any) -> Any:
            cells = self._cells[item]
            return type(self)(cells) if isinstance(cells, np.ndarray) else cells

        def __eq__(self, other: Any) -> np.ndarray:  # type: ignore[override]
            others = other._cells if isinstance(other, MCPToolPandasArray) else other
            return np.asarray(self._cells == others, dtype=bool)

        def isna(self) -> np.ndarray:
            return pd.isna(self._cells)

        def take(
            self, indices: Sequence[int], *, allow_fill: bool = False, fill_value: Any = None
        ) -> MCPToolPandasArray:
            return type(self)(take(self._cells, indices, allow_fill=allow_fill, fill_value=fill_value))

        def copy(self) -> MCPToolPandasArray:
            return type(self)(self._cells.copy())

    return MCPToolDtype


def tools_to_arrow(tools: Iterable[MCPTool]) -> pa.Table:
    """The provider's tools table in Arrow form.

    table = tools_to_arrow(tools)
    assert tools_from_arrow(table) == tools
    """
    encoded = _encode(tools, cells=False)
    arrays = {field.name: pa.array(encoded[field.name], type=field.type) for field in _STORAGE}
    storage = pa.StructArray.from_arrays(list(arrays.values()), fields=list(_STORAGE))
    return _table(pa.ExtensionArray.from_storage(MCPToolType(), storage), encoded, arrays)


def tools_to_table(tools: Iterable[MCPTool]) -> pa.Table:
    """The provider's tools table in KNIME form, as Arrow: "MCP Tool" holds JSON strings, flags are booleans. What
    the provider node hands to ``knext.Table.from_pyarrow``."""
    encoded = _encode(tools, cells=True)
    return _table(pa.array(encoded["cell"], type=pa.string()), encoded, {})


def _table(tool_column: pa.Array, encoded: dict[str, list[Any]], arrays: Mapping[str, pa.Array]) -> pa.Table:
    """The tools table: ``tool_column``, then the readable columns (from ``arrays`` where already built)."""
    flat = [
        arrays[key] if key in arrays else pa.array(encoded[key], type=pa.bool_() if key in _BOOL_KEYS else pa.string())
        for _, key in _FLAT
    ]
    return pa.Table.from_arrays([tool_column, *flat], names=list(COLUMNS))


def write_tools(tools: Iterable[MCPTool], path: str | os.PathLike[str], fmt: Literal["arrow", "parquet"]) -> None:
    """Write the Arrow tools table to an Arrow IPC file or a Parquet file (for the CLI)."""
    table = tools_to_arrow(tools)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        with pa.OSFile(os.fspath(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)


def tools_from_arrow(table: pa.Table, column: str = TOOL_COLUMN) -> list[MCPTool]:
    """The tools of an Arrow table's ``column``: the extension type, its bare struct (read without this module
    imported), or JSON text (a KNIME table's column)."""
    if column not in table.column_names:
        raise _not_tools(column, "the table has no such column")
    return _tools_of(table.column(column), column)


def tools_to_frame(tools: Iterable[MCPTool]) -> pd.DataFrame:
    """The provider's tools table in KNIME form: "MCP Tool" holds JSON strings, flags are booleans."""
    return tools_to_table(tools).to_pandas()


def tools_from_frame(frame: pd.DataFrame, column: str = TOOL_COLUMN) -> list[MCPTool]:
    """The tools of a pandas ``column`` holding JSON strings (KNIME) or MCPTool objects (Arrow's ``to_pandas``)."""
    if column not in frame.columns:
        raise _not_tools(column, "the table has no such column")
    return _tools_from_cells(frame[column].tolist(), column, [str(label) for label in frame.index])


def _tools_of(data: pa.Array | pa.ChunkedArray, column: str) -> list[MCPTool]:
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    tools: list[MCPTool] = []
    offset = 0
    for chunk in chunks:
        kind = chunk.type
        if isinstance(kind, pa.ExtensionType) and kind.extension_name == EXTENSION_NAME:
            tools += _decode_struct(chunk.storage, column, offset)
        elif pa.types.is_struct(kind) and kind.get_field_index("notes") >= 0:
            tools += _decode_struct(chunk, column, offset)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            labels = [str(row) for row in range(offset, offset + len(chunk))]
            tools += _tools_from_cells(_py_values(chunk), column, labels)
        else:
            raise _not_tools(column, f"it is of type {kind}")
        offset += len(chunk)
    return tools


def _not_tools(column: str, reason: str) -> ConfigError:
    return ConfigError(f"Column {column!r} does not hold MCP tools: {reason}.", hint=_NOT_TOOLS_HINT)


def _tools_from_cells(cells: Sequence[Any], column: str, labels: Sequence[str]) -> list[MCPTool]:
    tools = []
    reader = TableReader()
    for cell, label in zip(cells, labels, strict=True):
        if isinstance(cell, MCPTool):
            tools.append(cell)
            continue
        try:
            tools.append(reader.cell(cell))
        except ConfigError as exc:
            raise _bad_row(column, label, exc) from exc
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            missing = cell is None or (isinstance(cell, float) and math.isnan(cell))
            shown = "a missing value" if missing else repr(str(cell)[:40])
            raise _not_tools(column, f"row {label} holds {shown}") from exc
    return tools


def _bad_row(column: str, label: str, error: ConfigError) -> ConfigError:
    """What is wrong with one tool of a table, naming its row, so that a run fails before anything connects."""
    return ConfigError(f"Column {column!r}, row {label}: {error.message}", server=error.server, hint=error.hint)


_READABLE = tuple(key for _, key in _FLAT)
_STRUCT_ONLY = tuple(field.name for field in _STORAGE if field.name not in _READABLE)


def _encode(tools: Iterable[MCPTool], *, cells: bool) -> dict[str, list[Any]]:
    """One list per readable column, and either each tool's JSON (``cell``: KNIME's "MCP Tool" cell) or the rest of
    the struct's fields. Each distinct server is serialised and checked for its seal once, without its own seal:
    the table's seal is each tool's (:func:`knime_mcp.seal.tool_sealer`)."""
    writer = ToolWriter()
    rows = []
    for tool in tools:
        texts, server, seal = writer.parts(tool)
        hints = tool.annotations
        readable = (
            tool.name, tool.title, tool.description, texts[0], texts[2],
            hints.read_only, hints.destructive, hints.idempotent, hints.open_world,
            tool.server.display_name, "\n".join(tool.notes),
        )  # fmt: skip
        if cells:
            rows.append((*readable, tool_cell(tool, texts, server, seal)))
        else:
            rows.append(
                (
                    *readable, tool.tool_name, texts[1], server, tool.notes, hints.annotated,
                    tool.task_support, seal, texts[3],
                )
            )  # fmt: skip
    keys = (*_READABLE, *(("cell",) if cells else _STRUCT_ONLY))
    columns = zip(*rows, strict=True) if rows else ([] for _ in keys)
    return {key: list(values) for key, values in zip(keys, columns, strict=True)}


def _decode_struct(storage: pa.StructArray, column: str, offset: int = 0) -> list[MCPTool]:
    if storage.null_count:
        row = offset + storage.is_null().to_pylist().index(True)
        raise _not_tools(column, f"row {row} holds a missing value")
    stored = {field.name: _py_values(array) for field, array in zip(storage.type, storage.flatten(), strict=True)}
    # A table written before these fields existed: its tools keep their hints' face value and run without tasks;
    # without a tool's seal they count as data.
    stored.setdefault("annotated", [True] * len(storage))
    stored.setdefault("task_support", [None] * len(storage))
    stored.setdefault("seal", [None] * len(storage))
    stored.setdefault("http", [None] * len(storage))
    return _decode(stored, column, offset)


def _py_values(array: pa.Array) -> list[Any]:
    """``array.to_pylist()``, with lists of text as tuples: through numpy for text and flags, which is ten times as
    fast (a table lists thousands of tools), and tuples, which the garbage collector stops tracking."""
    kind = array.type
    if _flat_kind(kind):
        return array.to_numpy(zero_copy_only=False).tolist()  # type: ignore[no-any-return]
    if pa.types.is_list(kind) and _flat_kind(kind.value_type):
        return [None if items is None else tuple(items) for items in array.to_numpy(zero_copy_only=False)]
    return array.to_pylist()


def _flat_kind(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_boolean(kind)


def _decode(columns: Mapping[str, list[Any]], column: str, offset: int = 0) -> list[MCPTool]:
    """Tools from one list per struct field; schemas that were written once are parsed once. A tool whose seal
    fits gets its server sealed (:func:`knime_mcp.seal.tool_seal_checker`); a malformed one is a ConfigError naming
    its row."""
    tools = []
    rows = zip(*(columns[field.name] for field in _STORAGE), strict=True)
    decode = _RowDecoder()
    for row, values in enumerate(rows, start=offset):
        try:
            tools.append(decode(*values))
        except ConfigError as exc:
            raise _bad_row(column, str(row), exc) from exc
        except (TypeError, ValueError) as exc:
            raise _bad_row(column, str(row), ConfigError(f"The tool is malformed ({exc}).")) from exc
    return tools


class _RowDecoder:
    """Decodes the rows of one table, parsing each distinct server and set of hints once."""

    def __init__(self) -> None:
        self._reader = TableReader()
        self._annotations: dict[tuple[bool, ...], ToolAnnotations] = {}
        self._server: tuple[str, TableServer] | None = None

    def __call__(
        self, name: Any, tool_name: Any, title: Any, description: Any, input_text: str, parameter_text: str,
        output_text: str | None, read_only: Any, destructive: Any, idempotent: Any, open_world: Any, server: str,
        notes: Any, annotated: Any, task_support: Any, seal: Any, http_text: str | None,
    ) -> MCPTool:  # fmt: skip
        flags = (read_only, destructive, idempotent, open_world, annotated is not False)
        hints = self._annotations.get(flags) or self._hints(flags)
        if self._server is None or self._server[0] != server:  # the rows come in runs of one server
            self._server = (server, self._reader.read(server))
        servers = self._server[1]
        task_support = task_support or "forbidden"
        http = None if http_text is None else HttpOperation.from_dict(from_json(http_text))
        input_schema = from_json(input_text)
        return MCPTool.from_fields(
            {
                "name": name,
                "tool_name": tool_name,
                "title": title,
                "description": description,
                "input_schema": input_schema,
                "parameter_schema": input_schema if parameter_text == input_text else from_json(parameter_text),
                "output_schema": None if output_text is None else from_json(output_text),
                "annotations": hints,
                "server": self._reader.fitting(servers, name, tool_name, hints, task_support, http, seal),
                "notes": tuple(notes),
                "task_support": task_support,
                "http": http,
            }
        )

    def _hints(self, flags: tuple[Any, ...]) -> ToolAnnotations:
        read_only, destructive, idempotent, open_world, annotated = flags
        hints = self._annotations[flags] = ToolAnnotations(
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            annotated=annotated,
        )
        return hints
