"""Row to arguments: which cell feeds which parameter of a tool, compiled once per run and applied to every row.

Layer: under the Tool Caller engine (:mod:`knime_mcp.caller.table`), over :mod:`knime_mcp.caller.convert` (one cell to
one JSON value); no I/O. By default each column whose name is a parameter feeds it; a mapping overrides parameter by
parameter. A missing cell omits its parameter; a required parameter left without a value is an
:class:`ArgumentError` for that row, naming the parameter and the column. Settings that can never work (a mapping
that names no column, a required parameter nothing feeds) raise :class:`ConfigError` before any call.

    plan = ArgumentPlan(tool, ["comment", "n"], mapping='{"text": "{comment}", "times": "{n}"}')
    arguments = plan.build({"comment": ["hi"], "n": [3]}, 0)      # {"text": "hi", "times": 3}
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Final

from knime_mcp.caller.convert import (
    ConversionError,
    declared_properties,
    is_missing,
    items_schema,
    property_schema,
    to_json,
    to_text,
)
from knime_mcp.calls.rows import json_object
from knime_mcp.columns import ROW_ID_COLUMN
from knime_mcp.errors import ConfigError
from knime_mcp.redaction import HIDDEN_VALUE, is_secret_key
from knime_mcp.tools.tool import MCPTool

__all__ = ["ArgumentError", "ArgumentMapping", "ArgumentPlan", "Columns", "parse_template"]

ArgumentMapping = Mapping[str, str] | str | None
"""``None``: columns feed the parameters of the same name. A dict: parameter → column name. Text: a JSON template."""

_PLACEHOLDER = re.compile(r"\{([^{}\"]+)\}")


class ArgumentError(ValueError):
    """One row's arguments cannot be built; the message names the parameter and the column."""


def parse_template(text: str) -> dict[str, Any]:
    """A mapping template's JSON object; checks only its syntax and numbers (only what JSON carries is sent), so it
    needs neither the tool nor the table."""
    return json_object(text, "The argument mapping", '{"text": "{comment}"}')


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Final = _Missing()

Columns = Mapping[str, Sequence[Any]]
"""A batch's cells by column name, one list per column."""


class _Source(ABC):
    """Where one value of the arguments comes from."""

    columns: tuple[str, ...] = ()

    @abstractmethod
    def value(self, cells: Columns, row: int) -> Any:
        """The value for ``row``, or ``_MISSING``; raises :class:`ArgumentError` for a cell that cannot convert."""

    def describe(self) -> str:
        return "the mapping"


class _Constant(_Source):
    def __init__(self, value: Any) -> None:
        self._value = value

    def value(self, cells: Columns, row: int) -> Any:
        return self._value


class _Column(_Source):
    def __init__(self, column: str, schema: Any, root: Any) -> None:
        self.columns = (column,)
        self._schema, self._root = schema, root

    def value(self, cells: Columns, row: int) -> Any:
        cell = cells[self.columns[0]][row]
        if is_missing(cell):
            return _MISSING
        try:
            return to_json(cell, self._schema, self._root)
        except ConversionError as exc:
            raise ArgumentError(f"column {self.columns[0]!r}: {exc}") from None

    def describe(self) -> str:
        return f"column {self.columns[0]!r}"


class _Text(_Source):
    """Text with ``{column}`` placeholders; missing as soon as one of its cells is."""

    def __init__(self, parts: list[str], columns: list[str]) -> None:
        self._parts = parts
        self.columns = tuple(columns)

    def value(self, cells: Columns, row: int) -> Any:
        pieces = [self._parts[0]]
        for column, literal in zip(self.columns, self._parts[1:], strict=True):
            cell = cells[column][row]
            if is_missing(cell):
                return _MISSING
            try:
                pieces += [to_text(cell), literal]
            except ConversionError as exc:
                raise ArgumentError(f"column {column!r}: {exc}") from None
        return "".join(pieces)

    def describe(self) -> str:
        return ", ".join(f"column {column!r}" for column in self.columns)


class _Object(_Source):
    def __init__(self, fields: dict[str, _Source]) -> None:
        self.fields = fields
        self.columns = tuple(dict.fromkeys(c for source in fields.values() for c in source.columns))

    def value(self, cells: Columns, row: int) -> Any:
        built = {}
        for name, source in self.fields.items():
            item = source.value(cells, row)
            if item is not _MISSING:
                built[name] = item
        return built


class _Array(_Source):
    def __init__(self, items: list[_Source]) -> None:
        self._items = items
        self.columns = tuple(dict.fromkeys(c for source in items for c in source.columns))

    def value(self, cells: Columns, row: int) -> Any:
        return [None if (item := source.value(cells, row)) is _MISSING else item for source in self._items]


class ArgumentPlan:
    """How every parameter of a tool gets its value from a row; compiled once per run, then applied to each row.

    By default each column whose name is a parameter feeds it. ``mapping`` overrides parameter by parameter: a dict
    maps parameters to column names; text is a JSON object template whose ``"{column}"`` strings take the column's
    value in the type the schema asks for at that place, whose other strings may embed ``{column}`` in text, and
    whose remaining values are sent as written. Problems with the settings raise :class:`ConfigError`.
    """

    def __init__(self, tool: MCPTool, columns: Sequence[str], mapping: ArgumentMapping = None) -> None:
        self._tool = tool
        self._root = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        self._available = [column for column in columns if column != ROW_ID_COLUMN]
        self._properties = declared_properties(self._root)
        required = self._root.get("required")
        self._required = {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()
        self._sources: dict[str, _Source] = {
            name: _Column(name, schema, self._root)
            for name, schema in self._properties.items()
            if name in self._available
        }
        self._sources.update(self._mapped(mapping))
        self._check_required()
        self.columns: tuple[str, ...] = tuple(dict.fromkeys(c for s in self._sources.values() for c in s.columns))
        """The input columns the arguments are built from."""

    @property
    def parameters(self) -> dict[str, str]:
        """Each parameter that gets a value, and where it comes from."""
        return {name: source.describe() for name, source in self._sources.items()}

    def build(self, cells: Columns, row: int) -> dict[str, Any]:
        """The arguments of one row; raises :class:`ArgumentError` naming the parameter and the column."""
        arguments = {}
        for name, source in self._sources.items():
            try:
                value = source.value(cells, row)
            except ArgumentError as exc:
                detail = f"{source.describe()}: {HIDDEN_VALUE}" if is_secret_key(name) else exc
                raise ArgumentError(f"parameter {name!r} from {detail}") from None
            if value is not _MISSING:
                arguments[name] = value
            elif name in self._required:
                raise ArgumentError(f"required parameter {name!r} has no value ({source.describe()} is missing)")
        return arguments

    def _mapped(self, mapping: ArgumentMapping) -> dict[str, _Source]:
        if mapping is None or (isinstance(mapping, str) and not mapping.strip()):
            return {}
        if isinstance(mapping, str):
            template = parse_template(mapping)
            fields = {name: self._compile(value, self._properties.get(name)) for name, value in template.items()}
        else:
            fields = {name: self._column(column, self._properties.get(name)) for name, column in mapping.items()}
        for name in fields:
            self._check_parameter(name)
        return fields

    def _column(self, column: Any, schema: Any) -> _Column:
        if not isinstance(column, str) or column not in self._available:
            available = ", ".join(repr(c) for c in self._available) or "none"
            raise ConfigError(
                f"The argument mapping refers to column {column!r}, which the input table does not have.",
                hint=f"Input columns: {available}.",
            )
        return _Column(column, schema, self._root)

    def _compile(self, node: Any, schema: Any) -> _Source:
        match node:
            case dict():
                return _Object(
                    {key: self._compile(value, property_schema(schema, key, self._root)) for key, value in node.items()}
                )
            case list():
                items = items_schema(schema, self._root)
                return _Array([self._compile(value, items) for value in node])
            case str():
                return self._compile_text(node, schema)
            case _:
                return _Constant(node)

    def _compile_text(self, text: str, schema: Any) -> _Source:
        pieces = _PLACEHOLDER.split(text)
        if len(pieces) == 1:
            return _Constant(text)
        columns = pieces[1::2]
        for column in columns:
            self._column(column, None)
        if pieces[0] == "" and pieces[2] == "" and len(pieces) == 3:
            return _Column(columns[0], schema, self._root)
        return _Text(pieces[0::2], columns)

    def _check_parameter(self, name: str) -> None:
        if name in self._properties or not self._properties or self._root.get("additionalProperties"):
            return
        known = ", ".join(repr(p) for p in self._properties)
        raise ConfigError(
            f"The argument mapping sets {name!r}, which is not a parameter of tool {self._tool.name!r}.",
            hint=f"Its parameters: {known}.",
        )

    def _check_required(self) -> None:
        unset = sorted(self._required - self._sources.keys())
        if unset:
            name = unset[0]
            raise ConfigError(
                f"Tool {self._tool.name!r} needs parameter {name!r}, but no input column has that name and the "
                "argument mapping does not set it.",
                hint=f'Rename a column to {name!r}, or map one in the argument mapping: {{"{name}": "{{column}}"}}.',
            )
