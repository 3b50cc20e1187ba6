"""Tools as tables hold them: the JSON of KNIME's "MCP Tool" cell, read and written a table at a time.

Below :class:`knime_mcp.tools.tool.MCPTool`, whose JSON methods use it, and :mod:`knime_mcp.tools.arrow` (whole tables),
so it knows a tool only by its fields (:class:`CellTool`), and makes one with the function it is given. A table
lists thousands of tools of a few servers, so what the rows share (a server's JSON and seal key, a set of hints) is
serialised or parsed once per table, and each tool's schemas once for every column that shows them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring_ascii as _quote
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from pydantic_core import from_json

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import seal_spec, tool_seal_checker, tool_sealer
from knime_mcp.tools.annotations import ToolAnnotations, compact_json, policy_facts
from knime_mcp.tools.http_operation import HttpOperation

__all__ = [
    "CellTool",
    "TableReader",
    "TableServer",
    "ToolWriter",
    "schema_texts",
    "server_from_table",
    "server_to_table",
    "server_to_table_json",
    "table_tags",
    "tool_cell",
]


class CellTool(Protocol):
    """What a cell is written from: an :class:`~knime_mcp.tools.tool.MCPTool`, which this module does not import, as
    the tool's own JSON methods use it."""

    name: str
    tool_name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    parameter_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: ToolAnnotations
    server: ServerSpec
    notes: tuple[str, ...]
    task_support: str
    http: HttpOperation | None
    tags: tuple[str, ...]

    @property
    def input_json(self) -> str: ...

    @property
    def policy_facts(self) -> str: ...


ToolT = TypeVar("ToolT")
"""The tool a :class:`TableReader` makes of a row's fields (an :class:`~knime_mcp.tools.tool.MCPTool`)."""


class TableServer(NamedTuple):
    """A server as a table holds it: unsealed, sealed here (for a tool whose seal fits), and its seal check."""

    unsealed: ServerSpec
    sealed: ServerSpec
    fits: Callable[[str, object], bool]


class TableReader(Generic[ToolT]):
    """What the rows of one table being read share, each parsed once: a table lists thousands of tools of a few
    servers with a handful of hint combinations, and a server's identity (what a seal covers) takes a while to
    compute. ``make`` turns a row's checked fields into a tool (``MCPTool.from_fields``)."""

    def __init__(self, make: Callable[[dict[str, Any]], ToolT]) -> None:
        self._make = make
        self._read: dict[str, TableServer] = {}
        self._last: tuple[object, TableServer] | None = None
        self._hints: dict[tuple[tuple[str, Any], ...], ToolAnnotations] = {}
        self._texts: dict[str, Any] = {}
        self._hint_texts: dict[str, ToolAnnotations] = {}
        self._server_text: tuple[str, TableServer] | None = None

    def read(self, text: str) -> TableServer:
        """The server whose JSON a table holds as ``text``."""
        try:
            return self._read[text]
        except KeyError:
            spec = server_from_table(json.loads(text))
            server = self._read[text] = TableServer(spec, seal_spec(spec), tool_seal_checker(spec))
            return server

    def server(self, data: object) -> TableServer:
        """:meth:`read` for a server already parsed; the rows of a table come in runs of one server, so each is
        compared with the previous row's before it is serialised."""
        if self._last is None or (self._last[0] is not data and self._last[0] != data):
            self._last = (data, self.read(json.dumps(data, sort_keys=True)))
        return self._last[1]

    @staticmethod
    def fitting(
        server: TableServer, name: Any, tool_name: Any, hints: ToolAnnotations, task_support: Any,
        http: HttpOperation | None, seal: object,
    ) -> ServerSpec:  # fmt: skip
        """The sealed server if the tool's seal fits, else the unsealed one. Checked before the tool is made, so that
        a sealed tool is made once; a name that is not text cannot fit, and the tool's constructor names it."""
        if not (isinstance(name, str) and isinstance(tool_name, str) and isinstance(task_support, str)):
            return server.unsealed
        fits = server.fits(policy_facts(name, tool_name, hints, task_support, http), seal)
        return server.sealed if fits else server.unsealed

    def annotations(self, data: Mapping[str, Any]) -> ToolAnnotations:
        key = tuple(data.items())
        try:
            return self._hints[key]
        except KeyError:
            hints = self._hints[key] = ToolAnnotations(**{"annotated": True, **data})
            return hints
        except TypeError:  # an unhashable value: not a hint, which the constructor says
            return ToolAnnotations(**{"annotated": True, **data})

    def tool(self, data: dict[str, Any]) -> ToolT:
        """A row's tool as the table holds it; its server counts as chosen by a person only if the tool's seal
        fits."""
        server = self.server(data["server"])
        # A table written before "annotated" existed cannot tell a tool without hints from one whose hints equal
        # the defaults, so it keeps the hints' face value (a destructive tool stays blocked).
        return self._made(data, server, self.annotations(data.get("annotations") or {}))

    def cell(self, text: str) -> ToolT:
        """:meth:`tool` of a row's JSON cell. A cell in the layout :func:`tool_cell` writes is parsed without what
        it repeats: a schema the parameter schema equals, and the server and hints of the rows before (a third and
        more of the text); any other cell is parsed whole."""
        parts = self._parts(text) if isinstance(text, str) else None
        if parts is None:
            return self.tool(from_json(text))
        data, hints_text, server_text = parts
        return self._made(data, self._server_of(server_text), self._hints_of(hints_text))

    def _parts(self, text: str) -> tuple[dict[str, Any], str, str] | None:
        """The cell's fields but the hints and server, and the text of its hints and of its server; None if the
        cell is not in the writer's layout. The text between the markers is taken for a field's only where it
        parses as one whole JSON value and the head parses back to the same text: then the cell reads as the
        fields it was cut into."""
        cut = _cut(text, "" if self._server_text is None else self._server_text[0])
        if cut is None:
            return None
        head, (input_text, parameter_text, output_text, hints_text, server_text), tail = cut
        try:
            data = from_json(head + tail)
            if data.keys() & _CUT_KEYS or _head(data) != head:
                return None
            input_schema = from_json(input_text)
            data["input_schema"] = input_schema
            data["parameter_schema"] = input_schema if parameter_text == input_text else from_json(parameter_text)
            data["output_schema"] = from_json(output_text)
            self._shared(hints_text)
            if self._server_text is None or self._server_text[0] != server_text:
                self._shared(server_text)
            return data, hints_text, server_text
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def _shared(self, text: str) -> Any:
        """``text`` parsed, once per table: the rows of a table share a few servers and sets of hints."""
        if text not in self._texts:
            self._texts[text] = from_json(text)
        return self._texts[text]

    def _server_of(self, text: str) -> TableServer:
        """The server of a cell's server text (parsed by :meth:`_parts`); compared with the previous row's first,
        as the rows of a table come in runs of one server."""
        if self._server_text is None or self._server_text[0] != text:
            self._server_text = (text, self.server(self._texts[text]))
        return self._server_text[1]

    def _hints_of(self, text: str) -> ToolAnnotations:
        """The hints of a cell's hints text (parsed by :meth:`_parts`)."""
        try:
            return self._hint_texts[text]
        except KeyError:
            hints = self._hint_texts[text] = self.annotations(self._texts[text] or {})
            return hints

    def _made(self, data: Mapping[str, Any], server: TableServer, hints: ToolAnnotations) -> ToolT:
        name, tool_name = data["name"], data["tool_name"]
        task_support = data.get("task_support") or "forbidden"
        http = None if data.get("http") is None else HttpOperation.from_dict(data["http"])
        seal = data.get("seal")
        tool = self._make(
            {
                "name": name,
                "tool_name": tool_name,
                "title": data.get("title"),
                "description": data.get("description") or "",
                "input_schema": data.get("input_schema") or {},
                "parameter_schema": data.get("parameter_schema") or {},
                "output_schema": data.get("output_schema"),
                "annotations": hints,
                "server": self.fitting(server, name, tool_name, hints, task_support, http, seal),
                "notes": tuple(data.get("notes") or ()),
                "task_support": task_support,
                "http": http,
                "tags": table_tags(data.get("tags")),
            }
        )
        if seal is not None and not isinstance(seal, str):
            raise ConfigError(f"The seal of tool {name!r} is not text.")
        return tool


_CUT_KEYS = ("input_schema", "parameter_schema", "output_schema", "annotations", "server")
"""The fields :func:`tool_cell` writes between the description and the notes, in order."""

_INPUT, _PARAMETERS, _OUTPUT, _HINTS, _SERVER = (f',"{key}":' for key in _CUT_KEYS)
_NOTES = ',"notes":'


def _cut(text: str, server: str = "") -> tuple[str, list[str], str] | None:
    """The cell cut at the markers of :data:`_CUT_KEYS` and of the notes: the text before them, the text of each
    of those fields, and the text after; None without them in order. Written out, as it runs for every row.

    ``server``: the previous row's server text, which parsed as one whole value; where this row's server text is
    the same, followed by the notes' marker, it is compared rather than searched (a third of a cell or more)."""
    # Each search starts where the one before found its marker; once one finds none (-1), the rest search the
    # last character only and find none either.
    i = text.find(_INPUT)
    p = text.find(_PARAMETERS, i)
    o = text.find(_OUTPUT, p)
    a = text.find(_HINTS, o)
    s = text.find(_SERVER, a)
    start = s + len(_SERVER)
    if s >= 0 and server and text.startswith(server, start) and text.startswith(_NOTES, start + len(server)):
        n = start + len(server)
    else:
        n = text.find(_NOTES, s)
        if n < 0:
            return None
        server = text[start:n]
    values = [
        text[i + len(_INPUT) : p],
        text[p + len(_PARAMETERS) : o],
        text[o + len(_OUTPUT) : a],
        text[a + len(_HINTS) : s],
        server,
    ]
    return text[:i], values, text[n:]


def _head(data: Mapping[str, Any]) -> str:
    """The start of a cell as :func:`tool_cell` writes it for these fields."""
    title = "null" if data["title"] is None else _quote(data["title"])
    return (
        f'{{"name":{_quote(data["name"])},"tool_name":{_quote(data["tool_name"])},"title":{title},'
        f'"description":{_quote(data["description"])}'
    )


class ToolWriter:
    """Writes the tools of one table as JSON cells; each distinct server is serialised and checked for its seal
    once, as a table lists thousands of tools of a few servers."""

    def __init__(self) -> None:
        self._servers: dict[int, tuple[ServerSpec, str, Callable[[str], str | None]]] = {}
        self._last: tuple[ServerSpec, str, Callable[[str], str | None]] | None = None

    def server(self, spec: ServerSpec) -> tuple[str, Callable[[str], str | None]]:
        """The server as a table holds it (:func:`server_to_table_json`), and the sealer of its tools."""
        known = self._last
        if known is None or known[0] is not spec:  # the tools of a listing come in runs of one server
            known = self._servers.get(id(spec))
            if known is None:
                known = self._servers[id(spec)] = (spec, server_to_table_json(spec), tool_sealer(spec))
            self._last = known
        return known[1], known[2]

    def parts(self, tool: CellTool) -> tuple[tuple[str, str, str | None, str | None], str, str | None]:
        """What a table holds of ``tool`` besides its own fields: its schema texts (:func:`schema_texts`), its
        server's JSON and its seal."""
        server, sealer = self.server(tool.server)
        return schema_texts(tool), server, sealer(tool.policy_facts)

    def cell(self, tool: CellTool) -> str:
        """:meth:`MCPTool.to_dict` as JSON, put together from parts serialised once."""
        return tool_cell(tool, *self.parts(tool))


def tool_cell(tool: CellTool, texts: tuple[str, str, str | None, str | None], server: str, seal: str | None) -> str:
    """:meth:`MCPTool.to_dict` as JSON from parts a table has serialised already: the schemas and HTTP request
    (:func:`schema_texts`), the server (:meth:`ToolWriter.server`) and the tool's seal."""
    input_text, parameter_text, output_text, http_text = texts
    title = "null" if tool.title is None else _quote(tool.title)
    notes = compact_json(list(tool.notes)) if tool.notes else "[]"
    http = "" if http_text is None else f',"http":{http_text}'
    tags = f',"tags":{compact_json(list(tool.tags))}' if tool.tags else ""
    return (
        f'{{"name":{_quote(tool.name)},"tool_name":{_quote(tool.tool_name)},"title":{title},'
        f'"description":{_quote(tool.description)},"input_schema":{input_text},'
        f'"parameter_schema":{parameter_text},"output_schema":{output_text or "null"},'
        f'"annotations":{tool.annotations.cell_json},"server":{server},"notes":{notes},'
        f'"task_support":{_quote(tool.task_support)}{http}{tags},"seal":{"null" if seal is None else _quote(seal)}}}'
    )


def schema_texts(tool: CellTool) -> tuple[str, str, str | None, str | None]:
    """The tool's input, parameter and output schemas and HTTP request as JSON (None for none); a parameter schema
    that is the input schema is serialised once."""
    input_text = tool.input_json
    parameters = tool.parameter_schema
    same = parameters is tool.input_schema or parameters == tool.input_schema
    return (
        input_text,
        input_text if same else compact_json(parameters),
        None if tool.output_schema is None else compact_json(tool.output_schema),
        None if tool.http is None else compact_json(tool.http.to_dict()),
    )


def table_tags(value: object) -> tuple[str, ...]:
    """A tool's tags as a table holds them: a list of texts, or nothing (a table written before tags existed)."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(tag, str) for tag in value):
        raise ConfigError("The tool's tags are not a list of texts.")
    return tuple(value)


def server_to_table(spec: ServerSpec) -> dict[str, Any]:
    """A tool's server as a table holds it: without the server's seal, as the table's seal is the tool's."""
    data = spec.to_dict()
    data.pop("seal", None)
    return data


def server_to_table_json(spec: ServerSpec) -> str:
    """:func:`server_to_table` as JSON; the spec's cached identity when there is no handshake to add."""
    if spec.handshake is None:
        return spec.identity
    return json.dumps(server_to_table(spec), sort_keys=True, separators=(",", ":"))


def server_from_table(data: object) -> ServerSpec:
    """A tool's server as a table holds it, unsealed: the seal a table keeps belongs to the tool (its server's seal
    in tables written before it covers the server only, and so no longer counts).

    A table may hold anything, so what is wrong is named instead of surfacing as a TypeError in a run."""
    if not isinstance(data, Mapping):
        raise ConfigError("The tool's server is not a JSON object.")
    for field_name in ("headers", "env"):
        entries = data.get(field_name) or {}
        if not isinstance(entries, Mapping):
            raise ConfigError(f"The server's {field_name} is not a JSON object.")
        if wrong := [name for name, value in entries.items() if not isinstance(value, str)]:
            raise ConfigError(f"The server's {field_name} entry {wrong[0]!r} is not text.")
    try:
        return ServerSpec.from_dict({name: value for name, value in data.items() if name != "seal"})
    except (TypeError, AttributeError, ValueError) as exc:
        raise ConfigError(f"The tool's server is malformed ({exc}).") from exc
