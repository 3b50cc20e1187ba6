"""Reading tools back from a tools table: the extension type's struct, its bare struct, or JSON text cells.

Below the extension type (:mod:`knime_mcp.tools.arrow_extension`), whose cells and chunks decode here, and
:mod:`knime_mcp.tools.arrow`, which offers :func:`tools_from_arrow` and :func:`tools_from_frame`. Columns are read
whole (one list per field, no per-row Arrow scalars), and each distinct server and set of hints is parsed once: a
provider lists thousands of tools, and a malformed one is a ConfigError that names its row before anything connects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pydantic_core import from_json

from knime_mcp.errors import ConfigError
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.program_call import ProgramCall
from knime_mcp.tools.table_layout import EXTENSION_NAME, STORAGE, TOOL_COLUMN
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from knime_mcp.tools.tool_cells import TableReader, TableServer, table_tags

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["decode", "decode_struct", "decode_row", "tools_from_arrow", "tools_from_frame", "tools_of"]

_NOT_TOOLS_HINT = "Connect the MCP Tool Provider's output table, or choose the column that holds its MCP tools."


def tools_from_arrow(table: pa.Table, column: str = TOOL_COLUMN) -> list[MCPTool]:
    """The tools of an Arrow table's ``column``: the extension type, its bare struct (read where the type is not
    registered), or JSON text (a KNIME table's column)."""
    if column not in table.column_names:
        raise _not_tools(column, "the table has no such column")
    return tools_of(table.column(column), column)


def tools_from_frame(frame: pd.DataFrame, column: str = TOOL_COLUMN) -> list[MCPTool]:
    """The tools of a pandas ``column`` holding JSON strings (KNIME) or MCPTool objects (Arrow's ``to_pandas``)."""
    if column not in frame.columns:
        raise _not_tools(column, "the table has no such column")
    return _tools_from_cells(frame[column].tolist(), column, [str(label) for label in frame.index])


def tools_of(data: pa.Array | pa.ChunkedArray, column: str) -> list[MCPTool]:
    """The tools of a column, chunk by chunk, whichever of the three forms each chunk holds."""
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    tools: list[MCPTool] = []
    offset = 0
    for chunk in chunks:
        kind = chunk.type
        if isinstance(kind, pa.ExtensionType) and kind.extension_name == EXTENSION_NAME:
            tools += decode_struct(chunk.storage, column, offset)
        elif pa.types.is_struct(kind) and kind.get_field_index("notes") >= 0:
            tools += decode_struct(chunk, column, offset)
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
    reader = TableReader(MCPTool.from_fields)
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


def decode_struct(storage: pa.StructArray, column: str, offset: int = 0) -> list[MCPTool]:
    """The tools of one struct chunk, whose first row is row ``offset`` of the column."""
    if storage.null_count:
        row = offset + storage.is_null().to_pylist().index(True)
        raise _not_tools(column, f"row {row} holds a missing value")
    stored = {field.name: _py_values(array) for field, array in zip(storage.type, storage.flatten(), strict=True)}
    return decode(_with_later_fields(stored, len(storage)), column, offset)


def decode_row(row: Mapping[str, Any], column: str) -> MCPTool:
    """The tool of one struct cell's values: an extension scalar's, which holds no seal of its own."""
    return decode(_with_later_fields({key: [value] for key, value in row.items()}, 1, seal=False), column)[0]


def _with_later_fields(stored: dict[str, list[Any]], rows: int, *, seal: bool = True) -> dict[str, list[Any]]:
    """``stored`` with the fields a table written before they existed lacks: its tools keep their hints' face value,
    run without tasks and have no tags or apps; without a tool's seal they count as data (as a lone cell does)."""
    stored.setdefault("annotated", [True] * rows)
    for name in ("task_support", "seal", "http", "tags", "app_uri", "app_only", "program"):
        stored.setdefault(name, [None] * rows)
    if not seal:
        stored["seal"] = [None] * rows
    return stored


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


def decode(columns: Mapping[str, list[Any]], column: str, offset: int = 0) -> list[MCPTool]:
    """Tools from one list per struct field; schemas that were written once are parsed once. A tool whose seal
    fits gets its server sealed (:func:`knime_mcp.seal.tool_seal_checker`); a malformed one is a ConfigError naming
    its row."""
    tools = []
    rows = zip(*(columns[field.name] for field in STORAGE), strict=True)
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
        self._reader = TableReader(MCPTool.from_fields)
        self._annotations: dict[tuple[bool, ...], ToolAnnotations] = {}
        self._server: tuple[str, TableServer] | None = None

    def __call__(
        self, name: Any, tool_name: Any, title: Any, description: Any, input_text: str, parameter_text: str,
        output_text: str | None, read_only: Any, destructive: Any, idempotent: Any, open_world: Any, server: str,
        notes: Any, annotated: Any, task_support: Any, seal: Any, http_text: str | None, tags: Any, app_uri: Any,
        app_only: Any, program_text: str | None,
    ) -> MCPTool:  # fmt: skip
        flags = (read_only, destructive, idempotent, open_world, annotated is not False)
        hints = self._annotations.get(flags) or self._hints(flags)
        if self._server is None or self._server[0] != server:  # the rows come in runs of one server
            self._server = (server, self._reader.read(server))
        servers = self._server[1]
        task_support = task_support or "forbidden"
        http = None if http_text is None else HttpOperation.from_dict(from_json(http_text))
        program = None if program_text is None else ProgramCall.from_dict(from_json(program_text))
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
                "server": self._reader.fitting(servers, name, tool_name, hints, task_support, http, seal, program),
                "notes": tuple(notes),
                "task_support": task_support,
                "http": http,
                "program": program,
                "tags": table_tags(tags),
                "app_uri": app_uri,
                "app_only": app_only or False,
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
